package fakeslack

import (
	"encoding/base64"
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// conversations.history as Slack answers it: the messages at the top of a
// channel (thread replies are left out; a thread's root carries its
// reply_count), newest first. latest (default: now) and oldest (default:
// the beginning) bound the range, both excluded unless inclusive is set;
// limit (default 100, at most 999) sizes a page, and response_metadata's
// next_cursor, handed back as cursor, reads the next (older) one. Message
// metadata is returned only with include_all_metadata, as Slack does.

const (
	historyLimit    = 100
	historyMaxLimit = 999
)

func (s *Server) conversationsHistory(req *apiRequest, _ time.Time) reply {
	channel := req.get("channel")
	if channel == "" {
		return errorReply("channel_not_found")
	}
	limit := historyLimit
	if v := req.get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return errorReply("invalid_limit")
		}
		if n > 0 {
			limit = min(n, historyMaxLimit)
		}
	}
	inclusive := truthy(req.get("inclusive"))
	oldest, latest := req.get("oldest"), req.get("latest")
	var from string // the newest ts a page may hold, from the cursor
	if c := req.get("cursor"); c != "" {
		ts, ok := decodeCursor(c)
		if !ok {
			return errorReply("invalid_cursor")
		}
		from = ts
	}
	replies := map[string]int{}
	for _, m := range s.st.messages {
		if m.Channel == channel && m.ThreadTS != "" && m.ThreadTS != m.TS {
			replies[m.ThreadTS]++
		}
	}
	withMeta := truthy(req.get("include_all_metadata"))
	msgs := []map[string]any{}
	hasMore, next := false, ""
	for i := len(s.st.messages) - 1; i >= 0; i-- {
		m := s.st.messages[i]
		if m.Channel != channel || (m.ThreadTS != "" && m.ThreadTS != m.TS) ||
			!inRange(m.TS, oldest, latest, inclusive) || (from != "" && tsCompare(m.TS, from) > 0) {
			continue
		}
		if len(msgs) == limit {
			hasMore, next = true, encodeCursor(m.TS)
			break
		}
		out := s.listedMessageLocked(m, withMeta)
		if n := replies[m.TS]; n > 0 {
			out["thread_ts"] = m.TS
			out["reply_count"] = n
		}
		msgs = append(msgs, out)
	}
	return okReply(map[string]any{"messages": msgs, "has_more": hasMore, "pin_count": 0,
		"response_metadata": map[string]any{"next_cursor": next}})
}

// listedMessageLocked is a message as conversations.history and
// conversations.replies list it: its metadata only when asked for.
func (s *Server) listedMessageLocked(m *Message, withMeta bool) map[string]any {
	out := s.messageJSONLocked(m)
	if !withMeta {
		delete(out, "metadata")
	}
	return out
}

// inRange reports whether ts lies between oldest and latest (either empty
// for no bound), the bounds included only when inclusive.
func inRange(ts, oldest, latest string, inclusive bool) bool {
	if oldest != "" {
		if c := tsCompare(ts, oldest); c < 0 || (c == 0 && !inclusive) {
			return false
		}
	}
	if latest != "" {
		if c := tsCompare(ts, latest); c > 0 || (c == 0 && !inclusive) {
			return false
		}
	}
	return true
}

// tsCompare orders two Slack timestamps ("seconds.micros") by value.
func tsCompare(a, b string) int {
	x, okx := new(big.Rat).SetString(a)
	y, oky := new(big.Rat).SetString(b)
	if !okx || !oky {
		return strings.Compare(a, b)
	}
	return x.Cmp(y)
}

// encodeCursor makes a next_cursor in Slack's form, base64 of
// "next_ts:<ts without its dot>".
func encodeCursor(ts string) string {
	return base64.StdEncoding.EncodeToString([]byte("next_ts:" + strings.Replace(ts, ".", "", 1)))
}

func decodeCursor(c string) (string, bool) {
	b, err := base64.StdEncoding.DecodeString(c)
	if err != nil {
		return "", false
	}
	digits, found := strings.CutPrefix(string(b), "next_ts:")
	if !found || len(digits) <= 6 {
		return "", false
	}
	if _, err := strconv.ParseUint(digits, 10, 64); err != nil {
		return "", false
	}
	return digits[:len(digits)-6] + "." + digits[len(digits)-6:], true
}

func truthy(v string) bool { return v == "1" || v == "true" }

// Duplicates returns the bot's messages that share their metadata (the same
// event_type and an equal event_payload) with another bot message in the
// same channel, each group together, in the order the first of each was
// posted: a post made twice. Messages without metadata are not compared.
func (st *State) Duplicates() []Message {
	groups := map[string][]*Message{}
	var keys []string
	for _, m := range st.messages {
		k, ok := metadataKey(m)
		if !ok {
			continue
		}
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], m)
	}
	var out []Message
	for _, k := range keys {
		if g := groups[k]; len(g) > 1 {
			for _, m := range g {
				out = append(out, st.copyMessage(m))
			}
		}
	}
	return out
}

// Duplicates returns the bot's messages posted more than once with the same
// metadata in a channel; see State.Duplicates.
func (s *Server) Duplicates() []Message { return read(s, (*State).Duplicates) }

// metadataKey is the channel and canonical metadata of a bot message.
func metadataKey(m *Message) (string, bool) {
	if !m.FromBot || len(m.Metadata) == 0 {
		return "", false
	}
	var md struct {
		EventType    string `json:"event_type"`
		EventPayload any    `json:"event_payload"`
	}
	if json.Unmarshal(m.Metadata, &md) != nil || md.EventType == "" {
		return "", false
	}
	// Marshalling decoded JSON sorts object keys: equal payloads match.
	payload, err := json.Marshal(md.EventPayload)
	if err != nil {
		return "", false
	}
	return m.Channel + "\x00" + md.EventType + "\x00" + string(payload), true
}
