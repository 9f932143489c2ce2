package temporalbackend

import (
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
)

// attributeGaps is the one rule gonogo doctor reports by and gonogo
// temporal setup acts on: each of gonogo's attributes, by name, that a
// namespace lacks or has under another type; others' attributes do not
// count.
func TestAttributeGaps(t *testing.T) {
	kw, num := enumspb.INDEXED_VALUE_TYPE_KEYWORD, enumspb.INDEXED_VALUE_TYPE_INT
	cases := []struct {
		name string
		have map[string]enumspb.IndexedValueType
		want []AttributeGap
	}{
		{"none", nil, []AttributeGap{{Name: AttrChannel, Want: kw}, {Name: AttrStarter, Want: kw}, {Name: AttrState, Want: kw}}},
		{"all, and another's", map[string]enumspb.IndexedValueType{AttrState: kw, AttrStarter: kw, AttrChannel: kw, "CustomerId": num}, nil},
		{"one missing, one of another type", map[string]enumspb.IndexedValueType{AttrState: num, AttrStarter: kw},
			[]AttributeGap{{Name: AttrChannel, Want: kw}, {Name: AttrState, Want: kw, Have: num, Present: true}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := attributeGaps(c.have)
			if len(got) != len(c.want) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("gap %d: %+v, want %+v", i, got[i], c.want[i])
				}
			}
			if r := (Readiness{Exists: true, Lacking: got}); r.Ready() != (len(c.want) == 0) {
				t.Errorf("Ready() = %v with gaps %+v", r.Ready(), got)
			}
		})
	}
	if (Readiness{}).Ready() {
		t.Error("a namespace that does not exist is ready")
	}
}
