package engine

import "bytes"

// EditChange is how much of a text an edit changed, from 0 (the same
// lines) to 1 (no line kept): the lines deleted from before plus the lines
// inserted into after, over the lines of both. It is line-based, as a
// unified diff is: a line changed counts as one deleted and one inserted,
// so changing one line of ten is 2/20 = 0.1. Two empty texts are 0.
//
// Lines are split at '\n'; a last line without one is a line. The count of
// deleted and inserted lines is the shortest edit script (Myers' O(ND)
// algorithm after the common head and tail are dropped), so the measure
// is exact, and costs little for the small edits people make.
func EditChange(before, after []byte) float64 {
	a, b := splitLines(before), splitLines(after)
	total := len(a) + len(b)
	if total == 0 {
		return 0
	}
	return float64(lineDistance(a, b)) / float64(total)
}

func splitLines(t []byte) [][]byte {
	if len(t) == 0 {
		return nil
	}
	lines := bytes.SplitAfter(t, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// lineDistance is the number of lines deleted and inserted by the shortest
// edit script from a to b.
func lineDistance(a, b [][]byte) int {
	a, b = trimCommon(a, b)
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return n + m
	}
	x, y := lineNumbers(a, b)
	maxD := n + m
	v := make([]int, 2*maxD+2)
	off := maxD + 1
	for d := 0; d <= maxD; d++ {
		for k := -d; k <= d; k += 2 {
			i, j := furthest(v, off, d, k, x, y)
			v[off+k] = i
			if i >= n && j >= m {
				return d
			}
		}
	}
	return maxD
}

// furthest is where the path of d edits that ends on diagonal k reaches
// furthest, one edit more than the best of its neighbours (v, offset by
// off) and then along the lines x and y share.
func furthest(v []int, off, d, k int, x, y []int) (i, j int) {
	i = v[off+k-1] + 1 // from the diagonal below: a deletion
	if k == -d || k != d && v[off+k-1] < v[off+k+1] {
		i = v[off+k+1] // from the diagonal above: an insertion
	}
	j = i - k
	for i < len(x) && j < len(y) && x[i] == y[j] {
		i, j = i+1, j+1
	}
	return i, j
}

// trimCommon drops the lines a and b begin and end with alike.
func trimCommon(a, b [][]byte) ([][]byte, [][]byte) {
	for len(a) > 0 && len(b) > 0 && bytes.Equal(a[0], b[0]) {
		a, b = a[1:], b[1:]
	}
	for len(a) > 0 && len(b) > 0 && bytes.Equal(a[len(a)-1], b[len(b)-1]) {
		a, b = a[:len(a)-1], b[:len(b)-1]
	}
	return a, b
}

// lineNumbers numbers the lines of a and b, the same line the same
// number, so they compare as numbers.
func lineNumbers(a, b [][]byte) ([]int, []int) {
	ids := map[string]int{}
	num := func(ls [][]byte) []int {
		out := make([]int, len(ls))
		for i, l := range ls {
			id, ok := ids[string(l)]
			if !ok {
				id = len(ids)
				ids[string(l)] = id
			}
			out[i] = id
		}
		return out
	}
	return num(a), num(b)
}
