package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gonogo/gonogo/internal/terminal"
)

// auditTypes are the audit trail's formats, as gonogo export names them,
// with the type each is served as.
var auditTypes = map[string]string{
	"json": "application/json; charset=utf-8",
	"md":   "text/markdown; charset=utf-8",
}

// audit serves a run's audit trail to download: ?format=json (the
// default, as gonogo export's) or md, the bytes gonogo export writes,
// built by the same code as of this request. Another format is 404.
func (s *Server) audit(w http.ResponseWriter, r *http.Request) {
	id, ok := runID(r)
	format := r.URL.Query().Get("format")
	if format == "" {
		format = "json"
	}
	ctype, known := auditTypes[format]
	if !ok || !known {
		http.NotFound(w, r)
		return
	}
	s.withReader(w, r, func(ctx context.Context, rd Reader) error {
		run, journal, err := rd.RunWithJournal(ctx, id)
		if err != nil {
			return err
		}
		x := terminal.Export{Data: s.data, Run: id, Format: format}
		body, err := x.Trail(ctx, rd, run, journal, s.now())
		if err != nil {
			return fmt.Errorf("the audit trail of run %s: %w", id, err)
		}
		h := w.Header()
		h.Set("Content-Type", ctype)
		h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-audit.%s"`, id, format))
		h.Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
		return nil
	})
}
