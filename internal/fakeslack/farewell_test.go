package fakeslack

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/internal/hangguard"
)

// Slack writes nothing on a connection after its disconnect: a client
// that leaves at the disconnect (slack-go stops reading there) must have
// read every envelope sent on it. The refresh here falls exactly between
// the dispatcher choosing the connection for a slash command and writing
// it.
func TestNothingIsWrittenAfterTheDisconnect(t *testing.T) {
	for name, refresh := range map[string]func(s *Server) error{
		"Disconnect": (*Server).Disconnect,
		"Refresh":    func(s *Server) error { return s.Refresh(1) },
	} {
		t.Run(name, func(t *testing.T) {
			s := New()
			t.Cleanup(s.Close)
			chosen, resume := make(chan struct{}), make(chan struct{})
			s.mu.Lock()
			s.beforeWrite = func(int) {
				chosen <- struct{}{}
				<-resume
			}
			s.tickets["ticket-test"] = true
			s.mu.Unlock()

			c, _, err := websocket.DefaultDialer.DialContext(hangguard.Context(t), "ws"+strings.TrimPrefix(s.base, "http")+"/socket?ticket=ticket-test", nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Close() })
			if typ := readType(t, c); typ != "hello" {
				t.Fatalf("first frame is %q, want hello", typ)
			}

			env := s.SendSlashCommand(slack.SlashCommand{Command: "/gonogo", UserID: "U1", ChannelID: "C1", TeamID: TeamID, Text: "help"})
			<-chosen // the dispatcher took the connection for env
			if err := refresh(s); err != nil {
				t.Fatal(err)
			}
			close(resume)

			var got []string
			for range 2 {
				got = append(got, readType(t, c))
			}
			if got[0] != "slash_commands" || got[1] != "disconnect" {
				t.Errorf("frames after hello: %v; want the command (%s), then the disconnect", got, env)
			}
		})
	}
}

// readType reads the next frame and returns its type.
func readType(t *testing.T, c *websocket.Conn) string {
	t.Helper()
	_, data, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("reading a frame: %v", err)
	}
	var f struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("frame %s: %v", data, err)
	}
	return f.Type
}
