package compactcache

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// WatchDecoder reads a JSON watch stream of a packed kind, giving each
// event's object as Parse gives it (a bookmark as ParseBookmark does, an
// error as a metav1.Status). It is a watch.Decoder: watch.NewStreamWatcher
// turns it into the watch an informer reads.
//
// Events are told apart by the JSON values themselves, whatever whitespace
// (the API server writes one a line) or reads split or join them. An event
// longer than maxEvent is an error.
type WatchDecoder struct {
	r        io.ReadCloser
	drop     []string
	buf      []byte
	off, end int
	// err is the reader's error, returned once the events read before it
	// are decoded.
	err error
}

const (
	firstBuffer = 64 << 10
	maxEvent    = 256 << 20
)

// NewWatchDecoder returns a WatchDecoder of the stream r; drop names the
// metadata fields left out of every object, as in Parse.
func NewWatchDecoder(r io.ReadCloser, drop ...string) *WatchDecoder {
	return &WatchDecoder{r: r, drop: drop}
}

var _ watch.Decoder = &WatchDecoder{}

// Decode implements watch.Decoder.
func (d *WatchDecoder) Decode() (watch.EventType, runtime.Object, error) {
	ev, err := d.next()
	if err != nil {
		return "", nil, err
	}
	if ev[0] != '{' {
		return "", nil, errors.New("decoding a watch event: not a JSON object")
	}
	var typ string
	var obj []byte
	err = members(ev, func(m member) error {
		switch string(m.unescaped()) {
		case "type":
			typ = stringOrEmpty(m.value)
		case "object":
			obj = m.value
		}
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	if obj == nil || obj[0] != '{' {
		return "", nil, fmt.Errorf("decoding a %q watch event: it has no object", typ)
	}
	switch t := watch.EventType(typ); t {
	case watch.Added, watch.Modified, watch.Deleted:
		o, err := parse(obj, d.drop)
		return t, o, err
	case watch.Bookmark:
		o, err := ParseBookmark(obj)
		return t, o, err
	case watch.Error:
		s := &metav1.Status{}
		if err := json.Unmarshal(obj, s); err != nil {
			return "", nil, fmt.Errorf("decoding a watch error: %w", err)
		}
		return t, s, nil
	default:
		return "", nil, fmt.Errorf("got invalid watch event type: %q", typ)
	}
}

// Close implements watch.Decoder.
func (d *WatchDecoder) Close() { _ = d.r.Close() }

// next returns the next JSON value of the stream, checked; it stays valid
// until the next call.
func (d *WatchDecoder) next() ([]byte, error) {
	for {
		d.off = skipWS(d.buf[:d.end], d.off)
		if d.off < d.end {
			end, err := validEnd(d.buf[:d.end], d.off, 0)
			if err == nil {
				v := d.buf[d.off:end]
				d.off = end
				return v, nil
			}
			if !errors.Is(err, errIncomplete) {
				return nil, fmt.Errorf("decoding a watch event: %w", err)
			}
		}
		if d.err != nil {
			if d.off < d.end && errors.Is(d.err, io.EOF) {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, d.err
		}
		d.fill()
	}
}

// fill reads more of the stream after what is left to decode, moved to the
// buffer's start; the buffer doubles when that fills it.
func (d *WatchDecoder) fill() {
	if d.off > 0 {
		d.end = copy(d.buf, d.buf[d.off:d.end])
		d.off = 0
	}
	if d.end == len(d.buf) {
		if len(d.buf) >= maxEvent {
			d.err = fmt.Errorf("decoding a watch event: longer than %d bytes", maxEvent)
			return
		}
		grown := make([]byte, max(firstBuffer, 2*len(d.buf)))
		copy(grown, d.buf[:d.end])
		d.buf = grown
	}
	n, err := d.r.Read(d.buf[d.end:])
	d.end += n
	d.err = err
}
