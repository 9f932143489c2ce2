package bot

import (
	"bytes"
	"fmt"
	"mime"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/intake"
)

// FileRef is a file attached to a message, as Slack described it.
type FileRef struct {
	ID                 string
	Name               string
	Title              string
	Mimetype           string
	Filetype           string // Slack's file type: "markdown", "text", "png", "pdf", ...
	Size               int64
	URLPrivate         string
	URLPrivateDownload string
	External           bool // a link to a file kept outside Slack (Google Drive, ...)
	// NeedsInfo is set when Slack sent the id only (a file in a channel
	// shared with another organization): look it up with files.info.
	NeedsInfo bool
}

// FileRefFrom converts slack-go's file, from an event or from files.info.
func FileRefFrom(f slack.File) FileRef {
	return FileRef{
		ID:                 f.ID,
		Name:               f.Name,
		Title:              f.Title,
		Mimetype:           f.Mimetype,
		Filetype:           f.Filetype,
		Size:               int64(f.Size),
		URLPrivate:         f.URLPrivate,
		URLPrivateDownload: f.URLPrivateDownload,
		External:           f.IsExternal,
		NeedsInfo:          needsInfo(f),
	}
}

// needsInfo reports a file Slack described by its id only (see
// FileRef.NeedsInfo): it says so, or sent neither its name nor its type,
// or no address for a file kept in Slack.
func needsInfo(f slack.File) bool {
	return f.FileAccess == "check_file_info" ||
		(f.Name == "" && f.Mimetype == "" && f.Filetype == "") ||
		(f.URLPrivate == "" && f.URLPrivateDownload == "" && !f.IsExternal)
}

// label is how a message names the file.
func (f FileRef) label() string {
	switch {
	case f.Name != "":
		return fmt.Sprintf("%q", clip(f.Name, 80))
	case f.Title != "":
		return fmt.Sprintf("%q", clip(f.Title, 80))
	}
	return "file " + clip(f.ID, 40)
}

// Mention is a message that mentions the bot, read: the flags in its text
// and the files attached to it. A run started from it runs in ThreadTS.
type Mention struct {
	Flags engine.Flags
	// Yes (--yes) starts the plan at once, without the preview a plan from
	// a mention waits at for Start; Check (the word "check" in the text)
	// shows what the plan would run and runs nothing.
	Yes, Check bool
	Files      []FileRef
	// Text is what the message says besides mentions and flags, decoded as
	// for commands.
	Text string

	// User is the author. Team is the author's team when Slack says
	// (user_team, set in shared channels); otherwise "", and the bot takes
	// the envelope's team_id.
	User, Team string
	Channel    string
	TS         string // the mention itself
	ThreadTS   string // where the run goes: the mention's thread, or a new thread under the mention
}

// ParseMention reads an app_mention event. Flags (--auto, --force-auto,
// --dry-run, --thread, --yes, or the same after "—" or "–") are taken from
// the text, every user mention stripped; any other word starting with "--"
// is refused, and after a lone "--" nothing is a flag (a lone dash is prose
// here). The word "check" before it (any case, punctuation around it
// aside) asks for a check. Other words are free text. slack-go v0.35.0's
// AppMentionEvent carries the message's files, so the plan is found
// without fetching the message; entries Slack sent as bare ids come back
// with NeedsInfo set. A message with no file is an *InputError telling the
// person to attach a plan; a bot's message, an edit, or missing fields are
// errors wrapping ErrBadPayload.
func ParseMention(ev *slackevents.AppMentionEvent) (Mention, error) {
	if err := refuseMention(ev); err != nil {
		return Mention{}, err
	}
	m, err := mentionOf(ev)
	if err != nil {
		return Mention{}, err
	}
	if err := checkText("the message", ev.Text, MaxMentionChars); err != nil {
		return Mention{}, &InputError{Problem: err.Error()}
	}
	text := slackText(ev.Text, true)
	cut, err := m.readFlags(text)
	if err != nil {
		return Mention{}, err
	}
	m.Text = cutWords(text, cut)
	for _, f := range ev.Files {
		m.Files = append(m.Files, FileRefFrom(f))
	}
	if len(m.Files) == 0 {
		return Mention{}, &InputError{Problem: "no plan attached: attach a Markdown (.md) or text (.txt) plan to the message " +
			"that mentions the bot, or start a chain of skills with /gonogo chain"}
	}
	return m, nil
}

// refuseMention refuses the mentions that never start a run: none, a
// bot's, an edit.
func refuseMention(ev *slackevents.AppMentionEvent) error {
	if ev == nil {
		return badPayload("no app_mention event")
	}
	if ev.BotID != "" {
		return badPayload("a message from bot %s does not start a run", clip(ev.BotID, 40))
	}
	if ev.Edited != nil {
		return &InputError{Problem: "an edited message does not start a run: post a new message that mentions the bot, with the plan attached"}
	}
	return nil
}

// mentionOf is who wrote a mention, where and when, each id checked; the
// run goes in the mention's thread, or in a new one under it.
func mentionOf(ev *slackevents.AppMentionEvent) (Mention, error) {
	m := Mention{User: ev.User, Team: firstNonEmpty(ev.UserTeam, ev.SourceTeam), Channel: ev.Channel, TS: ev.TimeStamp}
	m.ThreadTS = firstNonEmpty(ev.ThreadTimeStamp, ev.TimeStamp)
	if err := checkIDs("mention", "user", m.User, "channel", m.Channel); err != nil {
		return Mention{}, err
	}
	if m.Team != "" && !validID(m.Team) {
		return Mention{}, badPayload("mention: invalid user_team %q", clip(m.Team, 40))
	}
	if err := checkTSs("mention", "ts", m.TS, "thread_ts", m.ThreadTS); err != nil {
		return Mention{}, err
	}
	return m, nil
}

// readFlags sets the mention's flags and Check from the words of text
// (see ParseMention) and returns the words to cut from its text.
func (m *Mention) readFlags(text string) ([]word, error) {
	words, _ := splitWords(text, false)
	var cut []word
	for _, w := range words {
		// Only a typed "--" ends the flags here: in a message a lone dash
		// is prose, and must not turn the flags after it into text.
		if w.text == "--" {
			return append(cut, w), nil
		}
		name, ok := w.flag()
		if !ok {
			m.Check = m.Check || strings.EqualFold(strings.Trim(w.text, checkPunct), "check")
			continue
		}
		if name == "yes" {
			m.Yes = true
			cut = append(cut, w)
			continue
		}
		set, known := runFlagNames[name]
		if !known {
			if !strings.HasPrefix(w.raw, "--") {
				continue // "—like this" is prose; only a typed "--" is surely a flag
			}
			return nil, &InputError{Problem: unknownFlag(w, knownMentionFlags).Error()}
		}
		set(&m.Flags)
		cut = append(cut, w)
	}
	return cut, nil
}

// checkPunct is what may stand around the word "check" in a mention:
// "check:", "(check)", "check?".
const checkPunct = ".,:;!?()[]\"'`*_~“”‘’"

// PlanFile returns the one plan attached to the mention, checked with
// CheckPlanFile. Several files are refused here; the bot looks into them
// for the plan (PlanTyped, HasSection7) and asks when that does not say.
func (m Mention) PlanFile(maxBytes int64) (FileRef, error) {
	switch len(m.Files) {
	case 0:
		return FileRef{}, &InputError{Problem: "no plan attached: attach a Markdown (.md) or text (.txt) plan"}
	case 1:
		return m.Files[0], CheckPlanFile(m.Files[0], maxBytes)
	}
	var names []string
	for _, f := range m.Files {
		names = append(names, f.label())
	}
	return FileRef{}, &InputError{Problem: fmt.Sprintf("%d files attached (%s): attach one plan per message",
		len(m.Files), strings.Join(names, ", "))}
}

var (
	planFiletypes = map[string]bool{"markdown": true, "text": true}
	planMimetypes = map[string]bool{"text/plain": true, "text/markdown": true, "text/x-markdown": true}
	planExts      = map[string]bool{".md": true, ".markdown": true, ".txt": true, ".text": true}
)

// CheckPlanFile accepts a Markdown or plain-text file of at most maxBytes
// (no limit when maxBytes <= 0), judged by what Slack says about it: the
// MIME type, when present, must be text/plain or text/markdown, and Slack's
// file type, when present, markdown or text (Slack sniffs both, so "Q3.plan"
// typed as text passes); when Slack gives neither, the name's extension
// must be .md, .markdown, .txt or .text. Images, PDFs,
// archives, other code snippets and external links are refused, with a
// message naming the file. A file sent as a bare id is an error wrapping
// ErrNeedsFileInfo. CheckPlanContent checks the bytes once downloaded.
func CheckPlanFile(f FileRef, maxBytes int64) error {
	if err := checkPlanType(f); err != nil {
		return err
	}
	switch {
	case f.Size < 0:
		return badPayload("%s has a negative size", f.label())
	case f.Size == 0:
		return &InputError{Problem: fmt.Sprintf("%s is empty: attach the plan itself", f.label())}
	case maxBytes > 0 && f.Size > maxBytes:
		return &InputError{Problem: fmt.Sprintf("%s is %s; gonogo reads plans up to %s", f.label(), sizeText(f.Size), sizeText(maxBytes))}
	}
	return nil
}

// checkPlanType is CheckPlanFile's judgement of the file's type alone.
func checkPlanType(f FileRef) error {
	if f.ID == "" {
		return badPayload("an attached file has no id")
	}
	if f.NeedsInfo {
		return fmt.Errorf("%s: %w", f.label(), ErrNeedsFileInfo)
	}
	if f.External {
		return &InputError{Problem: fmt.Sprintf("%s is a link to a file kept outside Slack: %s", f.label(), wantPlanFile)}
	}
	return checkSlackType(f)
}

// checkSlackType judges a file by the MIME type and file type Slack gives
// it, else by its name's extension.
func checkSlackType(f FileRef) error {
	mt, ft := mediaType(f.Mimetype), strings.ToLower(f.Filetype)
	if mt == "" && ft == "" {
		return checkPlanExt(f)
	}
	if !planTypes(mt, ft) {
		return &InputError{Problem: fmt.Sprintf("%s is %s, not a plan: %s", f.label(), describeType(mt, ft), wantPlanFile)}
	}
	return nil
}

// planTypes reports whether the MIME type and file type Slack gives a
// file ("" when it gives none) are those of a plan.
func planTypes(mt, ft string) bool {
	return (mt == "" || planMimetypes[mt]) && (ft == "" || planFiletypes[ft])
}

// wantPlanFile ends every refusal of an attached file's type.
const wantPlanFile = "attach the plan as a Markdown (.md) or plain-text (.txt) file"

// mediaType is a MIME type without its parameters, lower case; a type
// that does not parse is kept whole.
func mediaType(mimetype string) string {
	if mimetype == "" {
		return ""
	}
	if m, _, err := mime.ParseMediaType(mimetype); err == nil {
		return m
	}
	return strings.ToLower(mimetype)
}

// checkPlanExt judges a file Slack gives no type for by its name's
// extension.
func checkPlanExt(f FileRef) error {
	ext := strings.ToLower(path.Ext(f.Name))
	if ext == "" {
		return &InputError{Problem: fmt.Sprintf("Slack says nothing about the type of %s: %s", f.label(), wantPlanFile)}
	}
	if !planExts[ext] {
		return &InputError{Problem: fmt.Sprintf("%s is a %s file, not a plan: %s", f.label(), clip(ext, 20), wantPlanFile)}
	}
	return nil
}

// PlanTyped splits files (each described in full: no NeedsInfo) into
// those whose type may be a plan's (Markdown or plain text, as
// CheckPlanFile judges types) and the others.
func PlanTyped(files []FileRef) (typed, others []FileRef) {
	for _, f := range files {
		if checkPlanType(f) == nil {
			typed = append(typed, f)
		} else {
			others = append(others, f)
		}
	}
	return typed, others
}

// HasSection7 reports whether body reads as an action plan with a
// Section 7, the blocks gonogo runs: what makes a file the plan among the
// files of one message.
func HasSection7(body []byte, name string) bool { return intake.IsPlan(body, name) }

// Pick is the request of the mention for one of its files: what a choice
// between several plan files carries to the click that makes it.
func (m Mention) Pick(file string) PlanPick {
	return PlanPick{User: m.User, MentionTS: m.TS, File: file, Flags: m.Flags, Yes: m.Yes, Check: m.Check}
}

// CheckPlanContent checks a plan file's bytes once downloaded: a file can
// say it is Markdown and be something else. The body must be at most
// maxBytes (no limit when maxBytes <= 0), not blank, and UTF-8 text
// without NUL bytes. Problems are *InputError naming the file.
func CheckPlanContent(f FileRef, body []byte, maxBytes int64) error {
	n := int64(len(body))
	switch {
	case maxBytes > 0 && n > maxBytes:
		return &InputError{Problem: fmt.Sprintf("%s is %s; gonogo reads plans up to %s", f.label(), sizeText(n), sizeText(maxBytes))}
	case bytes.HasPrefix(body, []byte{0xff, 0xfe}) || bytes.HasPrefix(body, []byte{0xfe, 0xff}):
		return &InputError{Problem: fmt.Sprintf("%s is UTF-16 text: save it as UTF-8 and attach it again", f.label())}
	}
	if i := binaryAt(body); i >= 0 {
		return &InputError{Problem: fmt.Sprintf("%s is not text (binary content at byte %d): attach the plan as Markdown or plain text",
			f.label(), i)}
	}
	if trimSpace(strings.TrimPrefix(string(body), "\ufeff")) == "" {
		return &InputError{Problem: fmt.Sprintf("%s is empty: attach the plan itself", f.label())}
	}
	return nil
}

// binaryAt is the offset of the first NUL byte or invalid UTF-8 in body;
// -1 when there is none.
func binaryAt(body []byte) int {
	for i := 0; i < len(body); {
		r, w := utf8.DecodeRune(body[i:])
		if r == 0 || (r == utf8.RuneError && w == 1) {
			return i
		}
		i += w
	}
	return -1
}

func describeType(mt, ft string) string {
	switch {
	case strings.HasPrefix(mt, "image/"):
		return fmt.Sprintf("an image (%s)", mt)
	case mt == "application/pdf" || ft == "pdf":
		return "a PDF"
	case strings.HasPrefix(mt, "video/"):
		return fmt.Sprintf("a video (%s)", mt)
	case strings.HasPrefix(mt, "audio/"):
		return fmt.Sprintf("audio (%s)", mt)
	case strings.HasPrefix(mt, "text/"):
		return fmt.Sprintf("%s text", clip(mt, 40))
	case mt != "":
		return fmt.Sprintf("a binary file (%s)", clip(mt, 40))
	}
	return fmt.Sprintf("a %q file", clip(ft, 20))
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
