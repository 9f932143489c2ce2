package terminal

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/gonogo/gonogo/engine"
)

// Inbox collects the service's notices for the terminal. Notify never
// blocks: progress notices are coalesced, the others are all kept.
type Inbox struct {
	mu     sync.Mutex
	items  []engine.Notice
	signal chan struct{}
}

func NewInbox() *Inbox { return &Inbox{signal: make(chan struct{}, 1)} }

func (b *Inbox) Notify(n engine.Notice) {
	b.mu.Lock()
	if n.Progress != nil && len(b.items) > 0 && b.items[len(b.items)-1].Progress != nil {
		b.items[len(b.items)-1] = n
	} else {
		b.items = append(b.items, n)
	}
	b.mu.Unlock()
	select {
	case b.signal <- struct{}{}:
	default:
	}
}

// newer reports whether a notice waiting to be drained shows run id past
// seq: a change this terminal did not make (a decision from gonogo decide).
func (b *Inbox) newer(id engine.RunID, seq uint64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, n := range b.items {
		if n.Progress == nil && n.Run != nil && n.Run.ID == id && n.Run.Seq > seq {
			return true
		}
	}
	return false
}

func (b *Inbox) drain() []engine.Notice {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.items
	b.items = nil
	return out
}

// lineReader reads stdin one line at a time on request, so a wait for a
// decision can give way to Ctrl-C, and nothing reads stdin while $EDITOR
// has the terminal.
type lineReader struct {
	in      *bufio.Reader
	req     chan bool // true asks for one key (a rune), false for a line
	resp    chan lineResult
	started bool
	pending bool
}

type lineResult struct {
	line string
	err  error
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{in: bufio.NewReader(r), req: make(chan bool), resp: make(chan lineResult, 1)}
}

// read returns the next line, or ctx's error when ctx ends first; the line
// being read then is returned by the next call.
func (l *lineReader) read(ctx context.Context) (string, error) {
	select {
	case r := <-l.poll():
		l.took()
		return r.line, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// poll asks for the next line without waiting for it; it arrives on the
// returned channel, and whoever receives it calls took. A line nobody
// takes is returned by the next read.
func (l *lineReader) poll() <-chan lineResult { return l.ask(false) }

// pollKey is poll for one key: the next rune, which a terminal in raw
// mode gives without Enter. A line asked for earlier and not yet taken
// comes first.
func (l *lineReader) pollKey() <-chan lineResult { return l.ask(true) }

func (l *lineReader) ask(key bool) <-chan lineResult {
	if !l.started {
		l.started = true
		go func() {
			for key := range l.req {
				if key {
					k := ""
					r, _, err := l.in.ReadRune()
					if err == nil {
						k = string(r)
					}
					l.resp <- lineResult{k, err}
					continue
				}
				s, err := readLine(l.in)
				l.resp <- lineResult{s, err}
			}
		}()
	}
	if !l.pending {
		l.req <- key
		l.pending = true
	}
	return l.resp
}

// took says the line poll asked for was received.
func (l *lineReader) took() { l.pending = false }

// MaxLine caps a line read from stdin (a decision, redo feedback, edit
// PATH, an answer): 64 KiB before its newline. Past it the line is
// refused, and the rest of it is read and dropped, never held, so a line
// without end costs only the cap.
const MaxLine = 64 << 10

// lineTooLong is a line longer than maxLine; start is its beginning, all a
// message quotes of it.
type lineTooLong struct{ start string }

func (e *lineTooLong) Error() string {
	return fmt.Sprintf("a line read from stdin may be at most %d KiB; this one, %q, is longer", MaxLine>>10, e.start)
}

// tooLong reports whether err is a line longer than maxLine.
func tooLong(err error) bool {
	var long *lineTooLong
	return errors.As(err, &long)
}

// readLine reads one line, newline included, of at most maxLine bytes
// before the newline; a longer one is a *lineTooLong.
func readLine(in *bufio.Reader) (string, error) {
	var b []byte
	for {
		chunk, err := in.ReadSlice('\n')
		if len(b)+len(bytes.TrimSuffix(chunk, []byte("\n"))) > MaxLine {
			long := &lineTooLong{start: lineStart(b, chunk)}
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = in.ReadSlice('\n')
			}
			return "", long
		}
		b = append(b, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return string(b), err
		}
	}
}

// lineStart is the first 40 bytes of a line read in two parts, with a rune
// the cut parts dropped.
func lineStart(b, chunk []byte) string {
	n := min(len(b), 40)
	head := string(b[:n]) + string(chunk[:min(len(chunk), 40-n)])
	return strings.ToValidUTF8(head, "") + "…"
}
