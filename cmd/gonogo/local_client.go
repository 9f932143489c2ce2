package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record"
	"github.com/gonogo/gonogo/storage"
)

// runReader is what the read commands and decide need of the runs in a
// data directory: the store itself when this gonogo can open it, or the
// local API of the gonogo that holds it.
type runReader interface {
	List(ctx context.Context) ([]engine.RunSummary, error)
	Load(ctx context.Context, id engine.RunID) (*engine.Run, error)
	// RunWithJournal is a run and its journal up to the run's last event.
	RunWithJournal(ctx context.Context, id engine.RunID) (*engine.Run, []engine.Event, error)
	Artifact(ctx context.Context, id engine.RunID, step, attempt int) ([]byte, error)
	ArtifactSums(ctx context.Context, id engine.RunID) ([]storage.ArtifactSum, error)
	// ArtifactVersions is every version of an attempt's artifact, the
	// agent's original first, then each edit.
	ArtifactVersions(ctx context.Context, id engine.RunID, step, attempt int) ([][]byte, error)
	Close() error
}

// storeReader reads an open store.
type storeReader struct{ *storage.DB }

func (s storeReader) RunWithJournal(ctx context.Context, id engine.RunID) (*engine.Run, []engine.Event, error) {
	return loadWithJournal(ctx, s.DB, id)
}

// lockProbe is how long a read command waits for the store's lock before
// it asks the gonogo holding it instead.
const lockProbe = 200 * time.Millisecond

// holderWait is how long a command waits for the holder of a locked data
// directory to answer on its socket: it may be starting.
var holderWait = 3 * time.Second

// openReader opens the runs of a data directory for reading: the store
// when it is free, else through the local API of the gonogo holding it.
func openReader(ctx context.Context, e env, data string) (runReader, error) {
	switch c, ok, err := openCluster(ctx, e, data); {
	case err != nil:
		return nil, err
	case ok:
		return c, nil
	}
	// Reading creates nothing: a data directory without a store (a typo
	// in --data, or nothing run yet) has no runs.
	switch none, err := storage.Missing(data); {
	case err != nil:
		return nil, fmt.Errorf("open the store: %w", err)
	case none:
		return noStore{}, nil
	}
	db, err := openToRead(data, lockProbe)
	if err == nil {
		warnPendingFiles(e, db)
		return storeReader{db}, nil
	}
	if !errors.Is(err, engine.ErrLocked) {
		return nil, fmt.Errorf("open the store: %w", err)
	}
	return dialLocal(ctx, data)
}

// noStore is a data directory without a store: no runs, nothing decided.
type noStore struct{}

func (noStore) List(context.Context) ([]engine.RunSummary, error) { return nil, nil }
func (noStore) Load(context.Context, engine.RunID) (*engine.Run, error) {
	return nil, engine.ErrNotFound
}
func (noStore) RunWithJournal(context.Context, engine.RunID) (*engine.Run, []engine.Event, error) {
	return nil, nil, engine.ErrNotFound
}
func (noStore) Artifact(context.Context, engine.RunID, int, int) ([]byte, error) {
	return nil, engine.ErrNotFound
}
func (noStore) ArtifactSums(context.Context, engine.RunID) ([]storage.ArtifactSum, error) {
	return nil, engine.ErrNotFound
}
func (noStore) Decide(context.Context, engine.RunID, engine.Decision) (*engine.Run, bool, error) {
	return nil, false, engine.ErrNotFound
}
func (noStore) ArtifactVersions(context.Context, engine.RunID, int, int) ([][]byte, error) {
	return nil, engine.ErrNotFound
}
func (noStore) Close() error { return nil }

// localClient talks to the local API of the gonogo holding a data
// directory.
type localClient struct {
	hc     *http.Client
	data   string
	holder wireHolder
}

// dialLocal connects to the holder of data, waiting a little for one that
// is starting.
func dialLocal(ctx context.Context, data string) (*localClient, error) {
	c := &localClient{data: data}
	c.hc = &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			addr, release, err := socketAddr(data)
			if err != nil {
				return nil, err
			}
			defer release()
			var d net.Dialer
			return d.DialContext(ctx, "unix", addr)
		},
		DisableKeepAlives: true,
	}, Timeout: time.Minute}
	sock := filepath.Join(data, socketName)
	deadline := time.Now().Add(holderWait)
	for {
		err := c.get(ctx, "/v1/holder", &c.holder)
		if err == nil {
			return c, nil
		}
		if errors.Is(err, errTooLong) {
			return nil, err
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return nil, fmt.Errorf("%s is in use by another gonogo that does not answer on %s (%v): a gonogo from before the local API cannot be reached; try again once it is done: %w",
				filepath.Join(data, storage.FileName), sock, rootCause(err), engine.ErrLocked)
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
		}
	}
}

func rootCause(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

func (c *localClient) Close() error {
	c.hc.CloseIdleConnections()
	return nil
}

func (c *localClient) do(ctx context.Context, method, path string, body any) ([]byte, error) {
	var in io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		in = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://gonogo"+path, in)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("the gonogo holding %s: %w", c.data, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("the gonogo holding %s: %w", c.data, err)
	}
	if resp.StatusCode == http.StatusOK {
		return b, nil
	}
	var we wireError
	if json.Unmarshal(b, &we) != nil || we.Error == "" {
		return nil, fmt.Errorf("the gonogo holding %s answered %s: %s", c.data, resp.Status, strings.TrimSpace(string(b)))
	}
	return nil, engine.CodeError(we.Code, we.Error)
}

func (c *localClient) get(ctx context.Context, path string, into any) error {
	b, err := c.do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, into); err != nil {
		return fmt.Errorf("the gonogo holding %s: %s: %w", c.data, path, err)
	}
	return nil
}

func runPath(id engine.RunID) string { return "/v1/runs/" + url.PathEscape(string(id)) }

func (c *localClient) List(ctx context.Context) ([]engine.RunSummary, error) {
	b, err := c.do(ctx, http.MethodGet, "/v1/runs", nil)
	if err != nil {
		return nil, err
	}
	return record.UnmarshalSummaries(b)
}

func (c *localClient) RunWithJournal(ctx context.Context, id engine.RunID) (*engine.Run, []engine.Event, error) {
	b, err := c.do(ctx, http.MethodGet, runPath(id), nil)
	if err != nil {
		return nil, nil, err
	}
	return record.UnmarshalRun(b)
}

func (c *localClient) Load(ctx context.Context, id engine.RunID) (*engine.Run, error) {
	r, _, err := c.RunWithJournal(ctx, id)
	return r, err
}

func (c *localClient) Artifact(ctx context.Context, id engine.RunID, step, attempt int) ([]byte, error) {
	return c.do(ctx, http.MethodGet, fmt.Sprintf("%s/artifacts/%d/%d", runPath(id), step, attempt), nil)
}

func (c *localClient) ArtifactSums(ctx context.Context, id engine.RunID) ([]storage.ArtifactSum, error) {
	var in []wireSum
	if err := c.get(ctx, runPath(id)+"/artifacts", &in); err != nil {
		return nil, err
	}
	out := make([]storage.ArtifactSum, 0, len(in))
	for _, s := range in {
		out = append(out, storage.ArtifactSum(s))
	}
	return out, nil
}

func (c *localClient) ArtifactVersions(ctx context.Context, id engine.RunID, step, attempt int) ([][]byte, error) {
	var out [][]byte
	if err := c.get(ctx, fmt.Sprintf("%s/artifacts/%d/%d/versions", runPath(id), step, attempt), &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Decide sends a decision to the holder, which applies it as its own
// front end would; carried says whether it goes on with the run too (a
// terminal gonogo carries out only the run it shows).
func (c *localClient) Decide(ctx context.Context, id engine.RunID, d engine.Decision) (r *engine.Run, carried bool, err error) {
	b, err := c.do(ctx, http.MethodPost, runPath(id)+"/decisions", wireDecision{
		Step: d.Step, Attempt: d.Attempt, Kind: string(d.Kind), Feedback: d.Feedback, Key: d.Key, Actor: d.Actor,
	})
	if err != nil {
		return nil, false, err
	}
	var out wireDecided
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, false, fmt.Errorf("the gonogo holding %s: decision: %w", c.data, err)
	}
	r, _, err = record.UnmarshalRun(out.Run)
	return r, out.CarriedOut, err
}

// describe names the holder for messages.
func (c *localClient) describe() string {
	return fmt.Sprintf("gonogo %s (pid %d)", c.holder.Command, c.holder.PID)
}
