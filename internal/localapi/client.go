package localapi

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

// HolderWait is how long a command waits for the holder of a locked data
// directory to answer on its socket: it may be starting.
var HolderWait = 3 * time.Second

// Client talks to the local API of the gonogo holding a data
// directory.
type Client struct {
	hc     *http.Client
	data   string
	holder wireHolder
}

// Dial connects to the holder of data, waiting a little for one that
// is starting.
func Dial(ctx context.Context, data string) (*Client, error) {
	c := &Client{data: data}
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
	sock := filepath.Join(data, SocketName)
	deadline := time.Now().Add(HolderWait)
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
				filepath.Join(data, storage.FileName), sock, RootCause(err), engine.ErrLocked)
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
		}
	}
}

func RootCause(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

func (c *Client) Close() error {
	c.hc.CloseIdleConnections()
	return nil
}

func (c *Client) do(ctx context.Context, method, path string, body any) ([]byte, error) {
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

func (c *Client) get(ctx context.Context, path string, into any) error {
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

func (c *Client) List(ctx context.Context) ([]engine.RunSummary, error) {
	b, err := c.do(ctx, http.MethodGet, "/v1/runs", nil)
	if err != nil {
		return nil, err
	}
	return record.UnmarshalSummaries(b)
}

func (c *Client) RunWithJournal(ctx context.Context, id engine.RunID) (*engine.Run, []engine.Event, error) {
	b, err := c.do(ctx, http.MethodGet, runPath(id), nil)
	if err != nil {
		return nil, nil, err
	}
	return record.UnmarshalRun(b)
}

func (c *Client) Load(ctx context.Context, id engine.RunID) (*engine.Run, error) {
	r, _, err := c.RunWithJournal(ctx, id)
	return r, err
}

func (c *Client) Artifact(ctx context.Context, id engine.RunID, step, attempt int) ([]byte, error) {
	return c.do(ctx, http.MethodGet, fmt.Sprintf("%s/artifacts/%d/%d", runPath(id), step, attempt), nil)
}

func (c *Client) ArtifactSums(ctx context.Context, id engine.RunID) ([]storage.ArtifactSum, error) {
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

func (c *Client) ArtifactVersions(ctx context.Context, id engine.RunID, step, attempt int) ([][]byte, error) {
	var out [][]byte
	if err := c.get(ctx, fmt.Sprintf("%s/artifacts/%d/%d/versions", runPath(id), step, attempt), &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Decide sends a decision to the holder, which applies it as its own
// front end would; carried says whether it goes on with the run too (a
// terminal gonogo carries out only the run it shows).
func (c *Client) Decide(ctx context.Context, id engine.RunID, d engine.Decision) (r *engine.Run, carried bool, err error) {
	return c.decide(ctx, id, d, nil)
}

// Edit sends an edit (d.Kind engine.DecideEdit) to the holder: body
// becomes the attempt's artifact, as an edit typed in the holder's own
// terminal or Slack does. The holder refuses a body over its artifact
// limit, naming the limit.
func (c *Client) Edit(ctx context.Context, id engine.RunID, d engine.Decision, body []byte) (r *engine.Run, carried bool, err error) {
	if d.Kind != engine.DecideEdit {
		return nil, false, fmt.Errorf("only an edit carries a body, not %s", d.Kind)
	}
	return c.decide(ctx, id, d, body)
}

func (c *Client) decide(ctx context.Context, id engine.RunID, d engine.Decision, body []byte) (r *engine.Run, carried bool, err error) {
	b, err := c.do(ctx, http.MethodPost, runPath(id)+"/decisions", wireDecision{
		Step: d.Step, Attempt: d.Attempt, Kind: string(d.Kind), Feedback: d.Feedback, Key: d.Key, Actor: d.Actor, Body: body,
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

// Describe names the holder for messages.
func (c *Client) Describe() string {
	return fmt.Sprintf("gonogo %s (pid %d)", c.holder.Command, c.holder.PID)
}
