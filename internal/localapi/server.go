package localapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record"
	"github.com/gonogo/gonogo/storage"
)

// SocketName is the local API's socket inside the data directory.
const SocketName = "gonogo.sock"

// maxSocketPath is the longest unix socket path every platform gonogo
// runs on accepts (sun_path is 104 bytes on macOS and the BSDs, 108 on
// Linux, both counting the final NUL).
const maxSocketPath = 103

// errTooLong says a socket path cannot be bound or dialled.
var errTooLong = errors.New("too long for a unix socket")

// socketAddr returns an address for the socket in dir that fits in a
// sockaddr: the path itself, else the path relative to the working
// directory, else (Linux) the path through /proc/self/fd of dir opened
// for the purpose. release lets go of what the address needs; call it once
// the bind or dial is done.
func socketAddr(dir string) (addr string, release func(), err error) {
	p := filepath.Join(dir, SocketName)
	if len(p) <= maxSocketPath {
		return p, func() {}, nil
	}
	if abs, err := filepath.Abs(p); err == nil {
		if wd, err := os.Getwd(); err == nil {
			if rel, err := filepath.Rel(wd, abs); err == nil && len(rel) <= maxSocketPath {
				return rel, func() {}, nil
			}
		}
	}
	if runtime.GOOS == "linux" {
		if d, err := os.Open(dir); err == nil {
			via := fmt.Sprintf("/proc/self/fd/%d/%s", d.Fd(), SocketName)
			return via, func() { _ = d.Close() }, nil
		}
	}
	return "", nil, fmt.Errorf("%s is %d bytes, %w (at most %d): use a shorter --data path", p, len(p), errTooLong, maxSocketPath)
}

// Listen listens on the data directory's socket, readable and
// writable by its owner only. A socket file already there is stale: its
// gonogo is gone, since the caller holds the store's lock.
func Listen(dir string) (net.Listener, error) {
	p := filepath.Join(dir, SocketName)
	if fi, err := os.Lstat(p); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("local API: %s exists and is not a socket; move it away", p)
		}
		if err := os.Remove(p); err != nil {
			return nil, fmt.Errorf("local API: remove the stale socket: %w", err)
		}
	}
	addr, release, err := socketAddr(dir)
	if err != nil {
		return nil, fmt.Errorf("local API: %w", err)
	}
	ln, err := net.Listen("unix", addr)
	release()
	if err != nil {
		return nil, fmt.Errorf("local API: %w", err)
	}
	// The address may have been relative or through /proc: remove the
	// socket by its own path on close.
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := os.Chmod(p, 0o600); err != nil {
		_ = ln.Close()
		_ = os.Remove(p)
		return nil, fmt.Errorf("local API: %w", err)
	}
	return &ownedListener{Listener: ln, path: p}, nil
}

type ownedListener struct {
	net.Listener
	path string
}

func (l *ownedListener) Close() error {
	err := l.Listener.Close()
	_ = os.Remove(l.path)
	return err
}

// Recorder records what people decide on a run nobody here carries out:
// the change is durable, nothing starts, and the run goes on from it when
// it is next resumed.
type Recorder interface {
	Record(ctx context.Context, id engine.RunID, d engine.Decision, body []byte) (*engine.Run, error)
	Pause(ctx context.Context, id engine.RunID, actor string) (*engine.Run, error)
	RecordUnpause(ctx context.Context, id engine.RunID, actor string, m engine.Mode) (*engine.Run, error)
}

// Decisions is what the local API asks on behalf of other gonogo
// processes: it acts on decisions for the run this gonogo carries out
// and records those for any other.
type Decisions interface {
	Recorder
	Decide(ctx context.Context, id engine.RunID, d engine.Decision, body []byte) (*engine.Run, error)
	Unpause(ctx context.Context, id engine.RunID, actor string, m engine.Mode) (*engine.Run, error)
}

// Server is what the holder of a data directory serves on its socket.
type Server struct {
	db      *storage.DB
	svc     Decisions
	log     *slog.Logger
	command string // run, resume, demo or serve: named to whoever asks
	version string // this gonogo's version, named to whoever asks
	maxEdit int64  // the longest edit taken, in bytes (GONOGO_MAX_ARTIFACT)

	// carries is the one run a terminal gonogo carries out (run,
	// resume); nil for serve, which carries out every run. A decision
	// for another run is recorded, not acted on: that run goes on with
	// gonogo resume, with its own setup, once this gonogo is done.
	carries atomic.Pointer[engine.RunID]
}

// Carry says which run this gonogo carries out.
func (a *Server) Carry(id engine.RunID) { a.carries.Store(&id) }

// carriesOut reports whether a decision on id is carried out here.
func (a *Server) carriesOut(id engine.RunID) bool {
	if a.command == "serve" {
		return true
	}
	c := a.carries.Load()
	return c != nil && *c == id
}

// Serve serves the local API on ln until ctx ends, then lets the
// requests under way finish (for a few seconds at most) and removes the
// socket.
func Serve(ctx context.Context, ln net.Listener, api *Server) error {
	srv := &http.Server{Handler: api.Handler(), ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		_ = ln.Close()
		return fmt.Errorf("local API: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(sctx)
	<-done
	_ = ln.Close()
	return err
}

func (a *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/holder", a.holder)
	mux.HandleFunc("GET /v1/runs", a.list)
	mux.HandleFunc("GET /v1/runs/{id}", aRun(a.run))
	mux.HandleFunc("GET /v1/runs/{id}/artifacts", aRun(a.sums))
	mux.HandleFunc("GET /v1/runs/{id}/artifacts/{step}/{attempt}", aRun(a.artifact))
	mux.HandleFunc("GET /v1/runs/{id}/artifacts/{step}/{attempt}/versions", aRun(a.versions))
	mux.HandleFunc("POST /v1/runs/{id}/decisions", aRun(a.decide))
	mux.HandleFunc("POST /v1/runs/{id}/pause", aRun(a.pause))
	mux.HandleFunc("POST /v1/runs/{id}/resume", aRun(a.resume))
	return mux
}

// aRun answers 404 for a path whose {id} is not a well-formed run id:
// it names no run, so nothing looks it up, and the answer does not
// repeat it.
func aRun(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !engine.RunID(r.PathValue("id")).WellFormed() {
			writeError(w, http.StatusNotFound, "not-found", "no such run: not a gonogo run id")
			return
		}
		h(w, r)
	}
}

// wireHolder says who holds the data directory.
type wireHolder struct {
	PID     int    `json:"pid"`
	Command string `json:"command"`
	Version string `json:"version"`
}

func (a *Server) holder(w http.ResponseWriter, _ *http.Request) {
	b, err := json.Marshal(wireHolder{PID: os.Getpid(), Command: a.command, Version: a.version})
	writeBody(w, b, err, a)
}

func (a *Server) list(w http.ResponseWriter, r *http.Request) {
	list, err := a.db.List(r.Context())
	if err != nil {
		a.fail(w, err)
		return
	}
	b, err := record.MarshalSummaries(list)
	writeBody(w, b, err, a)
}

func (a *Server) run(w http.ResponseWriter, r *http.Request) {
	id := engine.RunID(r.PathValue("id"))
	run, err := a.db.Load(r.Context(), id)
	if err != nil {
		a.fail(w, err)
		return
	}
	j, err := a.db.Journal(r.Context(), id)
	if err != nil {
		a.fail(w, err)
		return
	}
	// A change committed between the two reads is left for the next look.
	for len(j) > 0 && j[len(j)-1].Seq > run.Seq {
		j = j[:len(j)-1]
	}
	b, err := record.MarshalRun(run, j)
	writeBody(w, b, err, a)
}

type wireSum struct {
	Step    int    `json:"step"`
	Attempt int    `json:"attempt"`
	Size    int    `json:"size"`
	SHA256  string `json:"sha256"`
}

func (a *Server) sums(w http.ResponseWriter, r *http.Request) {
	sums, err := a.db.ArtifactSums(r.Context(), engine.RunID(r.PathValue("id")))
	if err != nil {
		a.fail(w, err)
		return
	}
	out := make([]wireSum, 0, len(sums))
	for _, s := range sums {
		out = append(out, wireSum(s))
	}
	b, err := json.Marshal(out)
	writeBody(w, b, err, a)
}

// pathStepAttempt reads a request's {step} and {attempt}; it answers a bad
// one itself.
func pathStepAttempt(w http.ResponseWriter, r *http.Request) (step, attempt int, ok bool) {
	step, err1 := strconv.Atoi(r.PathValue("step"))
	attempt, err2 := strconv.Atoi(r.PathValue("attempt"))
	if err1 != nil || err2 != nil {
		writeError(w, http.StatusBadRequest, "bad-request", "step and attempt are numbers")
		return 0, 0, false
	}
	return step, attempt, true
}

// versions answers every version of an attempt's artifact, as a JSON list
// of base64 strings, the agent's original first.
func (a *Server) versions(w http.ResponseWriter, r *http.Request) {
	step, attempt, ok := pathStepAttempt(w, r)
	if !ok {
		return
	}
	vs, err := a.db.ArtifactVersions(r.Context(), engine.RunID(r.PathValue("id")), step, attempt)
	if err != nil {
		a.fail(w, err)
		return
	}
	b, err := json.Marshal(vs)
	writeBody(w, b, err, a)
}

func (a *Server) artifact(w http.ResponseWriter, r *http.Request) {
	step, attempt, ok := pathStepAttempt(w, r)
	if !ok {
		return
	}
	body, err := a.db.Artifact(r.Context(), engine.RunID(r.PathValue("id")), step, attempt)
	if err != nil {
		a.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

// wireDecision is a decision sent to the holder. Body is an edit's
// replacement artifact, byte for byte (base64 in the JSON).
type wireDecision struct {
	Step     int    `json:"step"`
	Attempt  int    `json:"attempt"`
	Kind     string `json:"kind"`
	Feedback string `json:"feedback,omitempty"`
	Key      string `json:"key"`
	Actor    string `json:"actor"`
	Body     []byte `json:"body,omitempty"`
}

func (a *Server) decide(w http.ResponseWriter, r *http.Request) {
	d, body, ok := a.readDecision(w, r)
	if !ok {
		return
	}
	id := engine.RunID(r.PathValue("id"))
	// The decision must not be lost to a caller that hangs up: once it is
	// in, it is carried out, and the next step started, whatever the
	// connection does.
	ctx := context.WithoutCancel(r.Context())
	// An edit goes through the same engine call as one typed in the
	// holder's terminal or Slack: the engine keeps the body as the
	// attempt's artifact, journals it under the actor, and applies a key
	// once.
	decide, carried := a.svc.Record, a.carriesOut(id)
	if carried {
		decide = a.svc.Decide
	}
	run, err := decide(ctx, id, d, body)
	if err != nil {
		a.fail(w, err)
		return
	}
	a.log.Debug("decision from the local API", "run", run.ID, "step", d.Step, "attempt", d.Attempt, "kind", d.Kind, "actor", d.Actor, "carried", carried)
	b, err := record.MarshalRun(run, nil)
	if err == nil {
		b, err = json.Marshal(wireDecided{Run: b, CarriedOut: carried})
	}
	writeBody(w, b, err, a)
}

// readDecision reads a posted decision and, for an edit, its body; it
// answers a bad one itself (ok false).
func (a *Server) readDecision(w http.ResponseWriter, r *http.Request) (d engine.Decision, body []byte, ok bool) {
	// The body travels as base64, a third longer than the edit; the rest
	// of a decision is small.
	r.Body = http.MaxBytesReader(w, r.Body, int64(base64.StdEncoding.EncodedLen(int(a.maxEdit)))+1<<20)
	var in wireDecision
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		if _, big := errors.AsType[*http.MaxBytesError](err); big {
			writeError(w, http.StatusRequestEntityTooLarge, "too-large", fmt.Sprintf(
				"the decision is over the %d-byte artifact limit (GONOGO_MAX_ARTIFACT) of the gonogo holding the data directory; nothing was decided", a.maxEdit))
			return d, nil, false
		}
		writeError(w, http.StatusBadRequest, "bad-request", "decision: "+err.Error())
		return d, nil, false
	}
	kind, err := engine.ParseDecisionKind(in.Kind)
	switch {
	case err != nil:
		writeError(w, http.StatusBadRequest, "bad-request", err.Error())
		return d, nil, false
	case kind != engine.DecideEdit && in.Body != nil:
		writeError(w, http.StatusBadRequest, "bad-request", fmt.Sprintf("only an edit carries a body, not %s", kind))
		return d, nil, false
	case int64(len(in.Body)) > a.maxEdit:
		writeError(w, http.StatusRequestEntityTooLarge, "too-large", fmt.Sprintf(
			"the edited artifact is %d bytes, over the %d-byte artifact limit (GONOGO_MAX_ARTIFACT) of the gonogo holding the data directory: shorten it; nothing was decided", len(in.Body), a.maxEdit))
		return d, nil, false
	case in.Key == "" || in.Actor == "":
		writeError(w, http.StatusBadRequest, "bad-request", "a decision needs a key and an actor")
		return d, nil, false
	}
	d = engine.Decision{Kind: kind, Step: in.Step, Attempt: in.Attempt, Feedback: in.Feedback, Key: in.Key, Actor: in.Actor}
	return d, in.Body, true
}

// wireDecided answers a decision: the run after it, and whether the holder
// goes on with the run (false: recorded only, for gonogo resume).
type wireDecided struct {
	Run        json.RawMessage `json:"run"`
	CarriedOut bool            `json:"carried_out"`
}

func writeBody(w http.ResponseWriter, b []byte, err error, a *Server) {
	if err != nil {
		a.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// httpStatus is the HTTP status of a refusal with wire code code (see
// engine.ErrorCode); the code itself says which refusal it is.
func httpStatus(code string) int {
	switch code {
	case "not-found":
		return http.StatusNotFound
	case "forbidden", "not-approver":
		return http.StatusForbidden
	}
	return http.StatusConflict
}

func (a *Server) fail(w http.ResponseWriter, err error) {
	if code := engine.ErrorCode(err); code != "" {
		writeError(w, httpStatus(code), code, err.Error())
		return
	}
	a.log.Error("local API", "err", err)
	writeError(w, http.StatusInternalServerError, "internal", err.Error())
}

type wireError struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(wireError{Error: msg, Code: code})
}

// NewServer is the local API of the gonogo that holds db: command is the
// command it runs (run, resume, demo or serve), version its version; svc
// carries out or records what other gonogo processes decide. maxEdit caps
// an edited artifact in bytes, as the holder's own front ends cap theirs
// (GONOGO_MAX_ARTIFACT); 0 is 1 MiB, the setting's default.
func NewServer(db *storage.DB, svc Decisions, log *slog.Logger, command, version string, maxEdit int64) *Server {
	if maxEdit <= 0 {
		maxEdit = 1 << 20
	}
	return &Server{db: db, svc: svc, log: log, command: command, version: version, maxEdit: maxEdit}
}
