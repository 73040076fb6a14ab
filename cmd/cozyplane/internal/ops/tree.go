package ops

import (
	"fmt"
	"io"
	"strings"
)

// Node is one object in a trace: what it is, the one condition that says
// whether it is healthy, and what it says.
type Node struct {
	// Kind, Namespace and Name identify the object (Namespace empty for a
	// cluster-scoped object or a part of one, such as a listener).
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Condition is the type shown (Ready unless said otherwise: Programmed
	// for a Gateway, Accepted for a route verdict).
	Condition string `json:"condition"`
	// Status is the condition's status: True, False, Unknown, or "" when
	// the object reports none (yet).
	Status  string `json:"status,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Notes are further facts, one a line (a pending plan, a hostname).
	Notes    []string `json:"notes,omitempty"`
	Children []*Node  `json:"children,omitempty"`
}

// Add appends children and returns n.
func (n *Node) Add(children ...*Node) *Node {
	n.Children = append(n.Children, children...)
	return n
}

// Normalize fills in what the text rendering implies: the condition shown
// is Ready when none is named. It returns n, modified. Pure.
func Normalize(n *Node) *Node {
	if n.Condition == "" {
		n.Condition = "Ready"
	}
	for _, c := range n.Children {
		Normalize(c)
	}
	return n
}

// ANSI colours.
const (
	colorReset  = "\x1b[0m"
	colorBold   = "\x1b[1m"
	colorGreen  = "\x1b[32m"
	colorRed    = "\x1b[31m"
	colorYellow = "\x1b[33m"
	colorGrey   = "\x1b[90m"
)

// Render writes the tree, one object a line:
//
//	Postgres tenant-demo/orders  Ready=True  InstallSucceeded: Helm install succeeded
//	└── HelmRelease tenant-demo/postgres-orders  Ready=True  InstallSucceeded: ...
//
// With color, statuses are green (True), red (False) or yellow (Unknown or
// none) and kinds are bold. Pure.
func Render(w io.Writer, root *Node, color bool) error {
	var b strings.Builder
	render(&b, root, "", "", color)
	_, err := io.WriteString(w, b.String())
	return err
}

func render(b *strings.Builder, n *Node, first, rest string, color bool) {
	b.WriteString(first)
	b.WriteString(headline(n, color))
	b.WriteByte('\n')
	kids := len(n.Children)
	for _, note := range n.Notes {
		bar := "    "
		if kids > 0 {
			bar = "│   "
		}
		b.WriteString(rest + bar + paint(color, colorGrey, note) + "\n")
	}
	for i, c := range n.Children {
		if i == kids-1 {
			render(b, c, rest+"└── ", rest+"    ", color)
		} else {
			render(b, c, rest+"├── ", rest+"│   ", color)
		}
	}
}

func headline(n *Node, color bool) string {
	id := n.Name
	if n.Namespace != "" {
		id = n.Namespace + "/" + n.Name
	}
	parts := []string{paint(color, colorBold, n.Kind) + " " + id}
	cond := n.Condition
	if cond == "" {
		cond = "Ready"
	}
	status := n.Status
	if status == "" {
		status = "-"
	}
	parts = append(parts, paint(color, statusColor(n.Status), cond+"="+status))
	switch {
	case n.Reason != "" && n.Message != "":
		parts = append(parts, n.Reason+": "+oneLine(n.Message))
	case n.Reason != "":
		parts = append(parts, n.Reason)
	case n.Message != "":
		parts = append(parts, oneLine(n.Message))
	}
	return strings.Join(parts, "  ")
}

func statusColor(s string) string {
	switch s {
	case "True":
		return colorGreen
	case "False":
		return colorRed
	}
	return colorYellow
}

func paint(color bool, code, s string) string {
	if !color {
		return s
	}
	return code + s + colorReset
}

// oneLine keeps a message on its line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// notef formats a note.
func notef(format string, args ...any) string { return fmt.Sprintf(format, args...) }
