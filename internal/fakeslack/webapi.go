package fakeslack

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

type apiMethod func(s *Server, req *apiRequest, now time.Time) reply

// apiMethods are the Web API methods the fake implements; any other answers
// unknown_method.
var apiMethods = map[string]apiMethod{
	"auth.test":                    (*Server).authTest,
	"apps.connections.open":        (*Server).appsConnectionsOpen,
	"chat.postMessage":             (*Server).chatPostMessage,
	"chat.update":                  (*Server).chatUpdate,
	"chat.postEphemeral":           (*Server).chatPostEphemeral,
	"chat.delete":                  (*Server).chatDelete,
	"views.open":                   (*Server).viewsOpen,
	"views.push":                   (*Server).viewsPush,
	"views.update":                 (*Server).viewsUpdate,
	"files.getUploadURLExternal":   (*Server).filesGetUploadURLExternal,
	"files.completeUploadExternal": (*Server).filesCompleteUploadExternal,
	"files.info":                   (*Server).filesInfo,
	"conversations.replies":        (*Server).conversationsReplies,
	"conversations.history":        (*Server).conversationsHistory,
	"usergroups.users.list":        (*Server).usergroupsUsersList,
	"users.info":                   (*Server).usersInfo,
	"assistant.threads.setStatus":  (*Server).assistantThreadsSetStatus,
	"agents.sessions.setStatus":    (*Server).agentsSessionsSetStatus,
	"chat.startStream":             (*Server).chatStartStream,
	"chat.appendStream":            (*Server).chatAppendStream,
	"chat.stopStream":              (*Server).chatStopStream,
}

func (s *Server) authTest(*apiRequest, time.Time) reply {
	return okReply(map[string]any{
		"url": "https://" + TeamDomain + ".slack.com/", "team": TeamDomain, "user": "gonogo",
		"team_id": TeamID, "user_id": BotUserID, "bot_id": BotID,
	})
}

func (s *Server) appsConnectionsOpen(*apiRequest, time.Time) reply {
	s.seq++
	ticket := fmt.Sprintf("ticket-%06d", s.seq)
	s.tickets[ticket] = true
	return okReply(map[string]any{"url": "ws" + strings.TrimPrefix(s.base, "http") + "/socket?ticket=" + ticket})
}

// messageParams are the parts of a message a chat.* call may carry.
type messageParams struct {
	textValue  string
	hasText    bool
	blocks     []any
	rawBlocks  json.RawMessage
	hasBlocks  bool
	metadata   json.RawMessage
	attachment string
}

func parseMessageParams(req *apiRequest) (messageParams, reply, bool) {
	p := messageParams{textValue: req.get("text"), hasText: req.has("text"), attachment: req.get("attachments")}
	if raw, found := req.raw("blocks"); found {
		p.hasBlocks = true
		if err := json.Unmarshal(raw, &p.blocks); err != nil {
			return p, errorReply("invalid_blocks_format", "blocks: "+err.Error()), false
		}
		p.rawBlocks = slices.Clone(json.RawMessage(raw))
	}
	if raw, found := req.raw("metadata"); found && len(raw) > 0 {
		if !json.Valid(raw) {
			return p, errorReply("invalid_metadata_format"), false
		}
		p.metadata = slices.Clone(json.RawMessage(raw))
	}
	return p, reply{}, true
}

// checkMessageLocked records the message's violations and answers as Slack
// would when the message must be refused.
func (s *Server) checkMessageLocked(method, text string, blocks []any, now time.Time) (reply, bool) {
	vs := checkMessage(method, text, blocks)
	if !s.recordLocked(vs, now) {
		return reply{}, false
	}
	code := "invalid_blocks"
	for _, v := range vs {
		if v.Path == "text" {
			code = "msg_too_long"
		}
	}
	return errorReply(code, violationMessages(vs)...), true
}

// newMessageLocked reads and checks the content of a new message, as
// chat.postMessage and chat.postEphemeral both do.
func (s *Server) newMessageLocked(req *apiRequest, method string, now time.Time) (messageParams, reply, bool) {
	p, res, good := parseMessageParams(req)
	if !good {
		return p, res, false
	}
	if p.textValue == "" && len(p.blocks) == 0 && p.attachment == "" {
		return p, errorReply("no_text"), false
	}
	if res, refused := s.checkMessageLocked(method, p.textValue, p.blocks, now); refused {
		return p, res, false
	}
	return p, reply{}, true
}

func (s *Server) chatPostMessage(req *apiRequest, now time.Time) reply {
	channel := req.get("channel")
	if channel == "" {
		return errorReply("channel_not_found")
	}
	p, res, good := s.newMessageLocked(req, "chat.postMessage", now)
	if !good {
		return res
	}
	files, res, good := s.messageFilesLocked(req)
	if !good {
		return res
	}
	m := &Message{
		Channel: channel, TS: s.newTSLocked(), ThreadTS: req.get("thread_ts"),
		User: BotUserID, FromBot: true, Text: p.textValue, Blocks: p.rawBlocks, Metadata: p.metadata,
		Posted: now, Updated: now, fileIDs: files,
	}
	m.Rendered = render(m.Text, m.Blocks)
	s.addMessageLocked(m)
	return okReply(map[string]any{"channel": channel, "ts": m.TS, "message": s.messageJSONLocked(m)})
}

func (s *Server) addMessageLocked(m *Message) {
	s.st.messages = append(s.st.messages, m)
	s.st.byKey[msgKey(m.Channel, m.TS)] = m
	if m.FromBot && m.ThreadTS != "" {
		// The app's reply in a thread ends its loading status there.
		s.endStatusLocked(m.Channel, m.ThreadTS, m.Posted, "replied")
	}
}

func (s *Server) chatUpdate(req *apiRequest, now time.Time) reply {
	channel, ts := req.get("channel"), req.get("ts")
	m := s.st.byKey[msgKey(channel, ts)]
	if m == nil {
		return errorReply("message_not_found")
	}
	if !m.FromBot {
		return errorReply("cant_update_message")
	}
	p, res, good := parseMessageParams(req)
	if !good {
		return res
	}
	// Slack keeps what an update leaves out.
	text, blocks, rawBlocks := m.Text, []any(nil), m.Blocks
	if p.hasText {
		text = p.textValue
	}
	if p.hasBlocks {
		blocks, rawBlocks = p.blocks, p.rawBlocks
	} else if len(m.Blocks) > 0 {
		_ = json.Unmarshal(m.Blocks, &blocks)
	}
	if text == "" && len(blocks) == 0 {
		return errorReply("no_text")
	}
	if res, refused := s.checkMessageLocked("chat.update", text, blocks, now); refused {
		return res
	}
	files, res, good := s.messageFilesLocked(req)
	if !good {
		return res
	}
	for _, id := range files {
		if !slices.Contains(m.fileIDs, id) {
			m.fileIDs = append(m.fileIDs, id)
		}
	}
	m.Text, m.Blocks = text, rawBlocks
	if p.metadata != nil {
		m.Metadata = p.metadata
	}
	m.Rendered = render(m.Text, m.Blocks)
	m.Updates++
	m.Updated = now
	return okReply(map[string]any{"channel": channel, "ts": ts, "text": m.Text, "message": s.messageJSONLocked(m)})
}

// messageFilesLocked reads a chat.postMessage's or chat.update's file_ids
// ("array of new file ids that will be sent with this message"): files
// the app uploaded, each of them whole.
func (s *Server) messageFilesLocked(req *apiRequest) ([]string, reply, bool) {
	raw := req.get("file_ids")
	if raw == "" {
		return nil, reply{}, true
	}
	var ids []string
	if err := json.Unmarshal([]byte(raw), &ids); err != nil {
		return nil, errorReply("invalid_arguments", "[ERROR] file_ids must be a JSON array of file ids"), false
	}
	for _, id := range ids {
		if f := s.st.files[id]; f == nil || (f.FromBot && !f.uploaded) {
			return nil, errorReply("file_not_found", "[ERROR] no uploaded file "+id), false
		}
	}
	return ids, reply{}, true
}

func (s *Server) chatPostEphemeral(req *apiRequest, now time.Time) reply {
	channel, user := req.get("channel"), req.get("user")
	if channel == "" {
		return errorReply("channel_not_found")
	}
	if user == "" {
		return errorReply("user_not_in_channel")
	}
	p, res, good := s.newMessageLocked(req, "chat.postEphemeral", now)
	if !good {
		return res
	}
	e := &Ephemeral{Channel: channel, User: user, ThreadTS: req.get("thread_ts"), TS: s.newTSLocked(), Via: "chat.postEphemeral",
		Text: p.textValue, Blocks: p.rawBlocks, Time: now}
	e.Rendered = render(e.Text, e.Blocks)
	s.st.ephemerals = append(s.st.ephemerals, e)
	return okReply(map[string]any{"message_ts": e.TS})
}

func (s *Server) chatDelete(req *apiRequest, _ time.Time) reply {
	channel, ts := req.get("channel"), req.get("ts")
	m := s.st.byKey[msgKey(channel, ts)]
	if m == nil {
		return errorReply("message_not_found")
	}
	if !m.FromBot {
		return errorReply("cant_delete_message")
	}
	s.deleteMessageLocked(m)
	return okReply(map[string]any{"channel": channel, "ts": ts})
}

func (s *Server) deleteMessageLocked(m *Message) {
	delete(s.st.byKey, msgKey(m.Channel, m.TS))
	s.st.messages = slices.DeleteFunc(s.st.messages, func(x *Message) bool { return x == m })
}

func (s *Server) viewsOpen(req *apiRequest, now time.Time) reply {
	return s.openView("views.open", req, false, now)
}

func (s *Server) viewsPush(req *apiRequest, now time.Time) reply {
	return s.openView("views.push", req, true, now)
}

// decodeView reads the view parameter and checks it.
func (s *Server) decodeViewLocked(method string, req *apiRequest, now time.Time) (map[string]any, json.RawMessage, reply, bool) {
	raw, found := req.raw("view")
	if !found {
		return nil, nil, errorReply("invalid_arguments", "[ERROR] missing required field: view"), false
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, nil, errorReply("invalid_arguments", "[ERROR] view: "+err.Error()), false
	}
	if vs := checkView(method, doc); s.recordLocked(vs, now) {
		return nil, nil, errorReply("invalid_arguments", violationMessages(vs)...), false
	}
	return doc, slices.Clone(json.RawMessage(raw)), reply{}, true
}

func (s *Server) openView(method string, req *apiRequest, pushed bool, now time.Time) reply {
	id := req.get("trigger_id")
	if id == "" {
		return errorReply("invalid_arguments", "[ERROR] missing required field: trigger_id")
	}
	t, res, good := s.exchangeTriggerLocked(id, now)
	if !good {
		return res
	}
	doc, raw, res, good := s.decodeViewLocked(method, req, now)
	if !good {
		return res
	}
	t.used = true
	v := &View{ID: s.newIDLocked("V"), User: t.user, TriggerID: id, Pushed: pushed, Opened: now}
	s.setViewLocked(v, doc, raw, now)
	s.st.views = append(s.st.views, v)
	return okReply(map[string]any{"view": s.viewJSON(v, nil)})
}

func (s *Server) setViewLocked(v *View, doc map[string]any, raw json.RawMessage, now time.Time) {
	v.Type = str(doc["type"])
	v.ExternalID = str(doc["external_id"])
	v.CallbackID = str(doc["callback_id"])
	v.PrivateMetadata = str(doc["private_metadata"])
	v.Title = textOf(doc["title"])
	v.Blocks = nil
	if b, err := json.Marshal(doc["blocks"]); err == nil && doc["blocks"] != nil {
		v.Blocks = b
	}
	v.JSON = raw
	v.Rendered = render(v.Title, v.Blocks)
	v.Hash = fmt.Sprintf("%d.fake-hash-%d", now.Unix(), s.seq)
	s.seq++
	v.Updated = now
}

// viewJSON is the view object Slack returns and sends in payloads: what the
// bot sent plus the fields Slack adds.
func (s *Server) viewJSON(v *View, state map[string]any) map[string]any {
	doc := map[string]any{}
	_ = json.Unmarshal(v.JSON, &doc)
	if state == nil {
		state = map[string]any{}
	}
	doc["id"] = v.ID
	doc["team_id"] = TeamID
	doc["app_id"] = AppID
	doc["bot_id"] = BotID
	doc["hash"] = v.Hash
	doc["root_view_id"] = v.ID
	doc["app_installed_team_id"] = TeamID
	doc["state"] = map[string]any{"values": state}
	return doc
}

func (s *Server) viewsUpdate(req *apiRequest, now time.Time) reply {
	id, ext := req.get("view_id"), req.get("external_id")
	if id == "" && ext == "" {
		return errorReply("invalid_arguments", "[ERROR] view_id or external_id is required")
	}
	var v *View
	for _, x := range s.st.views {
		if (id != "" && x.ID == id) || (id == "" && x.ExternalID == ext) {
			v = x
		}
	}
	if v == nil || v.Closed {
		return errorReply("not_found")
	}
	if h := req.get("hash"); h != "" && h != v.Hash {
		return errorReply("hash_conflict")
	}
	doc, raw, res, good := s.decodeViewLocked("views.update", req, now)
	if !good {
		return res
	}
	s.setViewLocked(v, doc, raw, now)
	v.Updates++
	return okReply(map[string]any{"view": s.viewJSON(v, nil)})
}

func (s *Server) filesGetUploadURLExternal(req *apiRequest, now time.Time) reply {
	name := req.get("filename")
	length, err := strconv.Atoi(req.get("length"))
	switch {
	case name == "":
		return errorReply("invalid_arguments", "[ERROR] missing required field: filename")
	case err != nil || length <= 0:
		return errorReply("invalid_arguments", "[ERROR] length must be a positive number of bytes")
	}
	f := &File{ID: s.newIDLocked("F"), Name: name, Title: name, Size: length, User: BotUserID, FromBot: true, Created: now}
	f.Mimetype, f.Filetype = fileType(name)
	f.URLPrivate = s.urlPrivate(f)
	s.st.files[f.ID] = f
	return okReply(map[string]any{"upload_url": s.base + "/upload/" + f.ID, "file_id": f.ID})
}

func (s *Server) urlPrivate(f *File) string {
	return s.base + "/files-pri/" + TeamID + "-" + f.ID + "/" + url.PathEscape(f.Name)
}

func fileType(name string) (mimetype, filetype string) {
	switch ext := strings.ToLower(path.Ext(name)); ext {
	case ".md", ".markdown":
		return "text/markdown", "markdown"
	case ".txt", "":
		return "text/plain", "text"
	default:
		if t := mime.TypeByExtension(ext); t != "" {
			return t, strings.TrimPrefix(ext, ".")
		}
		return "application/octet-stream", "binary"
	}
}

// serveUpload receives a file's bytes at its upload URL, as multipart (the
// way slack-go sends them) or as a raw body.
func (s *Server) serveUpload(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("file")
	now := time.Now()
	content, readErr := readUpload(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.st.files[id]
	var status int
	var msg string
	switch {
	case readErr != nil:
		status, msg = http.StatusBadRequest, readErr.Error()
	case f == nil || !f.FromBot:
		status, msg = http.StatusNotFound, "no upload URL "+id
	case f.uploaded:
		status, msg = http.StatusBadRequest, "file "+id+" was already uploaded"
	case len(content) != f.Size:
		status, msg = http.StatusBadRequest, fmt.Sprintf("uploaded %d bytes, files.getUploadURLExternal declared %d", len(content), f.Size)
		s.st.violations = append(s.st.violations, Violation{Method: "upload_url", Path: f.Name, Detail: msg, Limit: f.Size, Got: len(content), Time: now})
	default:
		f.Content, f.uploaded = content, true
		status, msg = http.StatusOK, fmt.Sprintf("OK - %d", len(content))
	}
	call := Call{Method: "upload_url", Params: url.Values{"file_id": {id}}, Status: status, Time: now}
	s.st.calls = append(s.st.calls, call)
	s.notifyLocked()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg)
}

func readUpload(r *http.Request) ([]byte, error) {
	ct, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "multipart/form-data" {
		return io.ReadAll(r.Body)
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return nil, fmt.Errorf("multipart upload has no \"file\" part")
		}
		if err != nil {
			return nil, fmt.Errorf("reading the multipart upload: %w", err)
		}
		if part.FormName() == "file" {
			b, err := io.ReadAll(part)
			if err != nil {
				return nil, fmt.Errorf("reading the file part: %w", err)
			}
			return b, nil
		}
	}
}

func (s *Server) filesCompleteUploadExternal(req *apiRequest, now time.Time) reply {
	var summaries []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal([]byte(req.get("files")), &summaries); err != nil || len(summaries) == 0 {
		return errorReply("invalid_arguments", "[ERROR] files must be a JSON list of {id, title}")
	}
	var channels []string
	if c := req.get("channel_id"); c != "" {
		channels = append(channels, c)
	}
	for _, c := range strings.Split(req.get("channels"), ",") {
		if c = strings.TrimSpace(c); c != "" && !slices.Contains(channels, c) {
			channels = append(channels, c)
		}
	}
	thread := req.get("thread_ts")
	if thread != "" && len(channels) == 0 {
		return errorReply("invalid_arguments", "[ERROR] thread_ts needs channel_id")
	}
	p, res, good := parseMessageParams(req)
	if !good {
		return res
	}
	comment := req.get("initial_comment")
	if len(channels) > 0 {
		if res, refused := s.checkMessageLocked("files.completeUploadExternal", comment, p.blocks, now); refused {
			return res
		}
	}
	var ids []string
	out := []map[string]any{}
	for _, sum := range summaries {
		f := s.st.files[sum.ID]
		if f == nil || !f.FromBot || !f.uploaded {
			return errorReply("file_not_found", "[ERROR] file "+sum.ID+" was never uploaded to its upload_url")
		}
		ids = append(ids, f.ID)
	}
	for _, sum := range summaries {
		f := s.st.files[sum.ID]
		if sum.Title != "" {
			f.Title = sum.Title
		}
		out = append(out, map[string]any{"id": f.ID, "title": f.Title})
	}
	// Slack shares the files with a message of their own in each channel
	// (in the thread, when thread_ts is given).
	for _, ch := range channels {
		m := &Message{Channel: ch, TS: s.newTSLocked(), ThreadTS: thread, User: BotUserID, FromBot: true,
			Text: comment, Blocks: p.rawBlocks, Posted: now, Updated: now, fileIDs: slices.Clone(ids)}
		m.Rendered = render(m.Text, m.Blocks)
		s.addMessageLocked(m)
	}
	return okReply(map[string]any{"files": out})
}

func (s *Server) filesInfo(req *apiRequest, _ time.Time) reply {
	f := s.st.files[req.get("file")]
	if f == nil {
		return errorReply("file_not_found")
	}
	return okReply(map[string]any{
		"file":     s.fileJSONLocked(f),
		"comments": []any{},
		"paging":   map[string]any{"count": 100, "total": 1, "page": 1, "pages": 1},
	})
}

func (s *Server) fileJSONLocked(f *File) map[string]any {
	channels := []string{}
	for _, m := range s.st.messages {
		if slices.Contains(m.fileIDs, f.ID) && !slices.Contains(channels, m.Channel) {
			channels = append(channels, m.Channel)
		}
	}
	return map[string]any{
		"id": f.ID, "name": f.Name, "title": f.Title, "mimetype": f.Mimetype, "filetype": f.Filetype,
		"pretty_type": f.Filetype, "user": f.User, "size": f.Size, "mode": "hosted", "is_external": false,
		"url_private": f.URLPrivate, "url_private_download": f.URLPrivate + "?download=1",
		"created": f.Created.Unix(), "timestamp": f.Created.Unix(), "channels": channels,
		"editable": false, "is_public": true,
	}
}

// serveDownload serves url_private to the bot token only. Slack itself
// redirects a request without a valid token to its sign-in page; the fake
// answers 403, which slack-go reports as a StatusCodeError.
func (s *Server) serveDownload(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	slug := r.PathValue("slug")
	id := slug[strings.IndexByte(slug, '-')+1:]
	authorized := r.Header.Get("Authorization") == "Bearer "+s.cfg.botToken
	s.mu.Lock()
	f := s.st.files[id]
	var content []byte
	status := http.StatusOK
	switch {
	case !authorized:
		status = http.StatusForbidden
	case f == nil || (f.FromBot && !f.uploaded):
		status = http.StatusNotFound
	default:
		content = slices.Clone(f.Content)
	}
	s.st.calls = append(s.st.calls, Call{Method: "url_private", Params: url.Values{"file": {id}}, Status: status, Time: now})
	s.notifyLocked()
	mimetype := ""
	if f != nil {
		mimetype = f.Mimetype
	}
	s.mu.Unlock()
	if status != http.StatusOK {
		http.Error(w, http.StatusText(status), status)
		return
	}
	w.Header().Set("Content-Type", mimetype)
	w.Header().Set("Content-Length", strconv.Itoa(len(content)))
	_, _ = w.Write(content)
}

func (s *Server) conversationsReplies(req *apiRequest, _ time.Time) reply {
	channel, ts := req.get("channel"), req.get("ts")
	withMeta := truthy(req.get("include_all_metadata"))
	msgs := []map[string]any{}
	for _, m := range s.st.messages {
		if m.Channel == channel && (m.TS == ts || m.ThreadTS == ts) {
			msgs = append(msgs, s.listedMessageLocked(m, withMeta))
		}
	}
	if len(msgs) == 0 {
		return errorReply("thread_not_found")
	}
	return okReply(map[string]any{"messages": msgs, "has_more": false, "response_metadata": map[string]any{"next_cursor": ""}})
}

func (s *Server) usergroupsUsersList(req *apiRequest, _ time.Time) reply {
	members, found := s.st.groups[req.get("usergroup")]
	if !found {
		return errorReply("no_such_subteam")
	}
	return okReply(map[string]any{"users": append([]string{}, members...)})
}

func (s *Server) usersInfo(req *apiRequest, _ time.Time) reply {
	id := req.get("user")
	if id == "" {
		return errorReply("user_not_found")
	}
	return okReply(map[string]any{"user": userJSON(id, true)})
}

func userJSON(id string, full bool) map[string]any {
	u := map[string]any{"id": id, "name": strings.ToLower(id), "team_id": TeamID}
	if !full {
		u["username"] = strings.ToLower(id)
		return u
	}
	u["real_name"] = id
	u["is_bot"] = id == BotUserID
	u["profile"] = map[string]any{"real_name": id, "display_name": strings.ToLower(id)}
	return u
}

// messageJSONLocked is a message as Slack returns it in API answers and
// payloads.
func (s *Server) messageJSONLocked(m *Message) map[string]any {
	out := map[string]any{"type": "message", "user": m.User, "text": m.Text, "ts": m.TS, "team": TeamID}
	if m.ThreadTS != "" {
		out["thread_ts"] = m.ThreadTS
	}
	if m.FromBot {
		out["bot_id"] = BotID
		out["app_id"] = AppID
	}
	if len(m.Blocks) > 0 {
		out["blocks"] = m.Blocks
	}
	if len(m.Metadata) > 0 {
		out["metadata"] = m.Metadata
	}
	if len(m.fileIDs) > 0 {
		files := []map[string]any{}
		for _, id := range m.fileIDs {
			if f := s.st.files[id]; f != nil {
				files = append(files, s.fileJSONLocked(f))
			}
		}
		out["files"] = files
		out["upload"] = !m.FromBot
	}
	return out
}
