package storage

import (
	"bytes"
	"testing"

	"github.com/gonogo/gonogo/internal/record"
)

// FuzzFramedRecords feeds arbitrary bytes to unframe, as a damaged or
// hand-edited file would: it must return an error or a header and a body
// that frame puts back as they were, never panic. (The records of runs,
// plans, events and summaries are fuzzed in package record.)
func FuzzFramedRecords(f *testing.F) {
	for _, h := range []any{
		fileRecord{V: record.Version, Run: "r0001", Path: "runs/r0001/01-a.md", Ref: &artRef{Step: 1, Attempt: 2, Version: 3}},
		inboxRecord{V: record.Version},
	} {
		v, err := frame(h, []byte("the body\n"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(v)
	}
	f.Add([]byte{0, 0, 1, 0, '{'})
	f.Add([]byte{0, 0})

	f.Fuzz(func(t *testing.T, data []byte) {
		var rec fileRecord
		body, err := unframe(data, &rec)
		if err != nil {
			return
		}
		again, err := frame(rec, body)
		if err != nil {
			t.Fatalf("an unframed header does not frame again: %v", err)
		}
		var rec2 fileRecord
		body2, err := unframe(again, &rec2)
		if err != nil || !bytes.Equal(body, body2) || rec.V != rec2.V || rec.Path != rec2.Path || rec.Run != rec2.Run {
			t.Fatalf("framed record changed in a round trip: %+v %q, then %+v %q (%v)", rec, body, rec2, body2, err)
		}
	})
}
