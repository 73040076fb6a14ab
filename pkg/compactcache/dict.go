package compactcache

import (
	"encoding/binary"
	"errors"
	"sync"

	"github.com/klauspost/compress/s2"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The packed fields of the objects of one kind are much alike: the same field
// names, the same conditions and messages, the same defaults, names that
// differ in a few characters. Each is therefore stored compressed (S2, a
// Snappy extension: microseconds per object either way) against a dictionary
// made of the packed fields of an earlier object of its kind, which cuts them
// to a tenth or less. A kind's first dictionary is made from the first of its
// objects whose packed fields are at least minDict bytes long (an object
// packed before is stored as JSON); it is made once more, from itself and
// the object, when an object compresses to more than a quarter of its size
// (the first object was new and had no status yet, say), so a kind has at
// most two. A dictionary is never changed nor dropped: every object packed
// with it names it, by its number.
const (
	// minDict is the length of a kind's first dictionary at least.
	minDict = 256
	// maxDict bounds a dictionary; its first bytes are kept.
	maxDict = 16 << 10
	// compressed starts a compressed value: packed JSON starts with '{'.
	compressed = 0
)

var errCorrupt = errors.New("corrupt packed value")

type dictionaries struct {
	mu sync.RWMutex
	// all are the dictionaries by number, for decoding; they never encode
	// (an encoding dictionary holds a table of 32 KiB).
	all []*s2.Dict
	// byKind is each kind's current dictionary.
	byKind map[schema.GroupVersionKind]*kindDict
}

type kindDict struct {
	id     int
	data   []byte
	enc    *s2.Dict
	remade bool
}

var dicts = &dictionaries{byKind: map[schema.GroupVersionKind]*kindDict{}}

// compress returns src compressed with the current dictionary of kind, or
// src itself when kind has none yet and src is too short to make one.
func (t *dictionaries) compress(kind schema.GroupVersionKind, src []byte) []byte {
	t.mu.RLock()
	d := t.byKind[kind]
	t.mu.RUnlock()
	if d == nil {
		if len(src) < minDict {
			return src
		}
		d = t.make(kind, nil, src)
	}
	out := d.encode(src)
	if 4*len(out) > len(src) && !d.remade {
		d = t.make(kind, d, src)
		out = d.encode(src)
	}
	return out
}

func (d *kindDict) encode(src []byte) []byte {
	head := binary.AppendUvarint([]byte{compressed}, uint64(d.id))
	return append(head, d.enc.Encode(nil, src)...)
}

// make gives kind a new dictionary: prev's bytes (nil for its first) and
// src. When another caller made one first, that one is returned.
func (t *dictionaries) make(kind schema.GroupVersionKind, prev *kindDict, src []byte) *kindDict {
	t.mu.Lock()
	defer t.mu.Unlock()
	if cur := t.byKind[kind]; cur != prev {
		return cur
	}
	var data []byte
	if prev != nil {
		data = append(data, prev.data...)
	}
	data = append(data, src...)
	if len(data) > maxDict {
		data = data[:maxDict]
	}
	// MakeDict returns nil below s2.MinDictSize bytes only: minDict is more.
	d := &kindDict{id: len(t.all), data: data, enc: s2.MakeDict(data, []byte(`{"`)), remade: prev != nil}
	t.all = append(t.all, s2.MakeDict(data, []byte(`{"`)))
	t.byKind[kind] = d
	return d
}

// decompress returns the JSON of a packed value.
func (t *dictionaries) decompress(s string) ([]byte, error) {
	if s == "" || s[0] != compressed {
		return []byte(s), nil
	}
	id, n := binary.Uvarint([]byte(s[1:min(len(s), 1+binary.MaxVarintLen64)]))
	if n <= 0 {
		return nil, errCorrupt
	}
	t.mu.RLock()
	var d *s2.Dict
	if id < uint64(len(t.all)) {
		d = t.all[id]
	}
	t.mu.RUnlock()
	if d == nil {
		return nil, errCorrupt
	}
	return d.Decode(nil, []byte(s[1+n:]))
}
