package config

import (
	"fmt"
	"strconv"
	"strings"
)

// ByteSize is a size in bytes written as a number with an optional unit
// (B, KB, KiB, MB, MiB, GB, GiB). It reads from a variable
// (UnmarshalText) and from a flag (Set, String, Type) alike.
type ByteSize int64

func (b *ByteSize) UnmarshalText(t []byte) error {
	s := strings.TrimSpace(string(t))
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return fmt.Errorf("%q is not a size (examples: 1048576, 512KiB, 1MiB)", string(t))
	}
	*b = ByteSize(n * mult)
	return nil
}

// String writes the size in the largest binary unit that holds it exactly.
func (b *ByteSize) String() string {
	n := int64(*b)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n > 0 && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

func (b *ByteSize) Set(s string) error { return b.UnmarshalText([]byte(s)) }

// Type names the value in help: --max-plan-bytes size.
func (b *ByteSize) Type() string { return "size" }
