package terminal

import (
	"io"

	"github.com/gonogo/gonogo/engine"
)

// printableWriter passes what it is given through engine.Printable, so
// that no byte of an agent's text (a preview, a summary, a FAILED reason,
// a journal line) reaches a terminal as a control sequence. gonogo's own
// cursor moves (the live progress line) are written to the writer under
// it. Each Write is taken as whole text: callers write whole strings, as
// fmt.Fprint* does.
type printableWriter struct{ w io.Writer }

// Printable wraps w; wrapping it twice changes nothing.
func Printable(w io.Writer) io.Writer {
	if _, ok := w.(printableWriter); ok {
		return w
	}
	return printableWriter{w}
}

// RawWriter is what w writes to, unsanitised.
func RawWriter(w io.Writer) io.Writer {
	if p, ok := w.(printableWriter); ok {
		return p.w
	}
	return w
}

func (p printableWriter) Write(b []byte) (int, error) {
	s := engine.Printable(string(b))
	if _, err := io.WriteString(p.w, s); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Terminal says whether the writer under it is a terminal (see isTerminal).
func (p printableWriter) Terminal() bool { return IsTerminal(p.w) }
