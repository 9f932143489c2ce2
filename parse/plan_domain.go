package parse

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/gonogo/gonogo/engine"
)

func (b *planBuilder) finishDomain() {
	found, source, label := b.domain2, "section-2", "Section 2 `**Domain:**`"
	if found == nil {
		found, source, label = b.domain0, "section-0", "Section 0 `**Situation classification:**`"
	}
	if found == nil {
		return
	}
	ds := planDomains(found.rest)
	b.doc.DomainLine = found.line
	b.setDomain(ds, source, label, found.line)
	if source == "section-2" && b.domain0 != nil {
		b.compareSection0(ds, found.line)
	}
}

// setDomain records the domain the domain line at line (label, from source)
// names, or that it is ambiguous, with a warning saying why.
func (b *planBuilder) setDomain(ds []engine.Domain, source, label string, line int) {
	switch len(ds) {
	case 1:
		b.doc.Domain, b.doc.DomainSource = ds[0], source
	case 0:
		b.doc.DomainAmbiguous = true
		b.warn(line, "the %s line names no Cynefin domain (Clear, Complicated, Complex or Chaotic); the domain is unknown", label)
	default:
		b.doc.DomainAmbiguous = true
		b.warn(line, "the %s line names several Cynefin domains (%s); the domain is left unknown rather than guessed", label, planJoinDomains(ds))
	}
}

// compareSection0 warns when Section 0 classifies the situation otherwise
// than Section 2's domain line at line2, which names ds and wins.
func (b *planBuilder) compareSection0(ds []engine.Domain, line2 int) {
	d0 := planDomains(b.domain0.rest)
	switch {
	case len(d0) != 1:
	case len(ds) != 1:
		b.warn(b.domain0.line, "Section 0 classifies the situation as %s, but Section 2's domain line (line %d) is ambiguous and takes precedence, so the domain stays unknown", d0[0], line2)
	case ds[0] != d0[0]:
		b.warn(b.domain0.line, "Section 0 classifies the situation as %s, but Section 2 (line %d) says %s, which is the one used", d0[0], line2, ds[0])
	}
}

// planDomains lists the distinct Cynefin domains named as whole words in a
// domain line, in order, ignoring an inline **Source:** clause.
func planDomains(rest string) []engine.Domain {
	var found []engine.Domain
	for _, w := range strings.FieldsFunc(planCutSource(rest), func(r rune) bool { return !unicode.IsLetter(r) }) {
		for _, d := range engine.Domains {
			if strings.EqualFold(w, string(d)) && !planHasDomain(found, d) {
				found = append(found, d)
			}
		}
	}
	return found
}

// planCutSource cuts an inline **Source:** clause (any emphasis, any case)
// off a domain line.
func planCutSource(rest string) string {
	low := strings.ToLower(rest)
	for _, m := range []string{"**source", "__source", "*source", "_source"} {
		if i := strings.Index(low, m); i >= 0 {
			rest, low = rest[:i], low[:i]
		}
	}
	return rest
}

func planHasDomain(ds []engine.Domain, d engine.Domain) bool {
	for _, x := range ds {
		if x == d {
			return true
		}
	}
	return false
}

func planJoinDomains(ds []engine.Domain) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = string(d)
	}
	return strings.Join(s, ", ")
}

var planConfidenceRE = regexp.MustCompile(`(?i)^(high|medium|low)(?:[-‐‑–—/](high|medium|low))?(?:$|[^\pL\pN])`)

var planLevels = map[string]string{"high": "High", "medium": "Medium", "low": "Low"}

func (b *planBuilder) finishConfidence() {
	found := b.conf0
	if found == nil {
		found = b.conf
	}
	if found == nil {
		return
	}
	v := strings.TrimLeft(found.rest, "*_ ")
	if strings.HasPrefix(v, "[") {
		b.warn(found.line, "the overall plan confidence is an unfilled template value (%s); no confidence is read", found.rest)
		return
	}
	m := planConfidenceRE.FindStringSubmatchIndex(v)
	if m == nil {
		b.warn(found.line, "the overall plan confidence %q is not High, Medium, Low or a pair such as Medium-High; no confidence is read", found.rest)
		return
	}
	conf, end := planConfidenceLevel(v, m)
	reason := strings.TrimLeft(v[end:], "*_")
	reason = strings.TrimSpace(reason)
	reason = strings.TrimLeft(reason, "-–—.:,;")
	b.doc.Confidence = conf
	b.doc.ConfidenceReason = strings.TrimSpace(reason)
}

// planConfidenceLevel is the capitalised confidence that planConfidenceRE
// matched in v (m its submatch indexes), one level or a pair of distinct
// ones, and where the match ends.
func planConfidenceLevel(v string, m []int) (string, int) {
	conf := planLevels[strings.ToLower(v[m[2]:m[3]])]
	if m[4] < 0 {
		return conf, m[3]
	}
	if second := planLevels[strings.ToLower(v[m[4]:m[5]])]; second != conf {
		conf += "-" + second
	}
	return conf, m[5]
}
