package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReadCapped(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, minPiece - 1, minPiece, minPiece + 1, 3*maxPiece + 17, 1 << 20} {
		data := bytes.Repeat([]byte("0123456789abcdef"), n/16+1)[:n]
		for _, max := range []int64{int64(n), int64(n) + 1, int64(n) - 1} {
			if max < 0 {
				continue
			}
			for _, oneByte := range []bool{false, true} {
				var r = bytes.NewReader(data)
				got, err := func() ([]byte, error) {
					if oneByte && n <= 3*maxPiece+17 {
						return readCapped(iotest.OneByteReader(r), max)
					}
					return readCapped(r, max)
				}()
				tooLarge := int64(n) > max
				if errors.Is(err, ErrOutputTooLarge) != tooLarge || (err != nil && !tooLarge) {
					t.Errorf("%d bytes, cap %d: err = %v", n, max, err)
				}
				want := data[:min(int64(n), max)]
				if !bytes.Equal(got, want) {
					t.Errorf("%d bytes, cap %d: got %d bytes, want the first %d", n, max, len(got), len(want))
				}
			}
		}
	}
}

// Reading an output allocates about twice its size (its pieces, then the
// one slice they are joined into), not the several times a slice growing
// by copying itself does.
func TestReadCappedAllocatesTwiceTheOutput(t *testing.T) {
	data := bytes.Repeat([]byte("x"), 8<<20)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := readCapped(bytes.NewReader(data), 64<<20)
	runtime.ReadMemStats(&after)
	if err != nil || len(got) != len(data) {
		t.Fatalf("readCapped: %d bytes, %v", len(got), err)
	}
	if ratio := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(data)); ratio > 2.05 {
		t.Errorf("reading %d bytes allocated %.2f times as much", len(data), ratio)
	}
}

// jsonText decodes a string exactly as encoding/json does.
func FuzzJSONText(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\nb\t\"q\" \\ \/ \u00e9 \ud83d\ude00 \ud800 x \udc00"`, `""`, "\"\xff\xfe ok\"", `"\u12"`, `null`} {
		f.Add([]byte(s))
	}
	f.Add(mustJSON(strings.Repeat("# Title\n\nText with \"quotes\" and é.\n", 50)))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var want string
		wantErr := json.Unmarshal(raw, &want)
		var got jsonText
		gotErr := json.Unmarshal(raw, &got)
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("%q: error %v, encoding/json's %v", raw, gotErr, wantErr)
		}
		if wantErr == nil && string(got) != want {
			t.Fatalf("%q: decoded %q, encoding/json %q", raw, got, want)
		}
	})
}

func mustJSON(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}
