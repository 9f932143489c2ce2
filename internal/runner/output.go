package runner

// Reading an agent's output costs twice its size at most: it is collected
// in pieces and joined once, rather than in a slice that grows by copying
// itself, which allocates several times what it ends up holding. The
// pieces are dropped as soon as they are joined, so two copies of the
// output are held at once only for that moment.

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// Sizes of the pieces: small first, so a short output costs little, then
// doubling up to maxPiece.
const (
	minPiece = 4 << 10
	maxPiece = 64 << 10
)

// pieces collects bytes whose total is not known in advance.
type pieces struct {
	parts [][]byte
	n     int
}

// spare returns the free end of the last piece, adding a piece when it is
// full.
func (p *pieces) spare() []byte {
	if k := len(p.parts); k > 0 && len(p.parts[k-1]) < cap(p.parts[k-1]) {
		last := p.parts[k-1]
		return last[len(last):cap(last)]
	}
	size := maxPiece
	if k := len(p.parts); k < 4 {
		size = minPiece << k
	}
	p.parts = append(p.parts, make([]byte, 0, size))
	return p.parts[len(p.parts)-1][:size]
}

// grew records that n bytes were written into what spare returned.
func (p *pieces) grew(n int) {
	last := &p.parts[len(p.parts)-1]
	*last = (*last)[:len(*last)+n]
	p.n += n
}

func (p *pieces) write(b []byte) {
	for len(b) > 0 {
		n := copy(p.spare(), b)
		p.grew(n)
		b = b[n:]
	}
}

// bytes returns the first max bytes collected (all of them when max < 0)
// as one slice (joined).
func (p *pieces) bytes(max int) []byte {
	if max >= 0 && p.n > max {
		cut, left := p.parts[:0:0], max
		for _, part := range p.parts {
			cut = append(cut, part[:min(len(part), left)])
			left -= len(cut[len(cut)-1])
		}
		return joined(cut)
	}
	return joined(p.parts)
}

// joined returns parts as one slice: a single part as it is, several
// copied once into a slice of exactly their size.
func joined(parts [][]byte) []byte {
	if len(parts) == 1 {
		return parts[0]
	}
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]byte, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// readCapped reads all of r, up to max bytes. More than max bytes is an
// error wrapping ErrOutputTooLarge, returned with the first max bytes.
func readCapped(r io.Reader, max int64) ([]byte, error) {
	var p pieces
	for {
		buf := p.spare()
		if left := max + 1 - int64(p.n); int64(len(buf)) > left {
			buf = buf[:left]
		}
		n, err := r.Read(buf)
		p.grew(n)
		if int64(p.n) > max {
			return p.bytes(int(max)), tooLargeError("the agent's output", max)
		}
		if err != nil {
			return p.bytes(-1), unlessEOF(err)
		}
	}
}

// unlessEOF is err, or nil when it is the end of the input: reading to
// the end is reading it all.
func unlessEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// readLines calls fn with every line r yields, without its newline. fn must
// not keep the slice. Memory stays bounded by max: a line longer than max
// bytes stops the reading with an error wrapping ErrOutputTooLarge.
func readLines(r io.Reader, max int64, fn func([]byte)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var long pieces // a line longer than br's buffer, collected piece by piece
	for {
		frag, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if int64(long.n+len(frag)) > max {
				return tooLargeError("a stream-json event", max)
			}
			long.write(frag)
			continue
		}
		line := frag
		if long.n > 0 {
			long.write(frag)
			// The pieces go before fn decodes the line: the line and
			// what fn makes of it are all that is held meanwhile.
			line, long = long.bytes(-1), pieces{}
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		if int64(len(line)) > max {
			return tooLargeError("a stream-json event", max)
		}
		if len(line) > 0 {
			fn(line)
		}
		if err != nil {
			return unlessEOF(err)
		}
	}
}
