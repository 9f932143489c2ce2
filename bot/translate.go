package bot

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The translate layer: what Slack delivers (a slash command, a button click,
// a modal submission, a mention with a file) becomes a gonogo request, or a
// clear error. Nothing here does I/O or keeps state, so every rule about
// what people may type is a table test away. This file holds what the
// payloads share: the errors they are refused with and the checks of
// Slack's ids.

// Limits on what people send.
const (
	// MaxCommandChars caps a slash command's text. A context longer than
	// this belongs in a plan file.
	MaxCommandChars = 12000
	// MaxMentionChars is Slack's own limit for a message's text.
	MaxMentionChars = 40000
	// MaxEditBytes caps an edited artifact given as a reply in the thread
	// (a file or a message); the edit modal holds at most maxModalInputText
	// characters. It matches the default artifact cap of the runners.
	MaxEditBytes = 1 << 20
)

// The edit-reply modal offers the replies found in the thread as options
// of one input; the selected option's value is a ReplyRef.
const (
	BlockReply = "gonogo_reply"
	InputReply = "gonogo_reply_input"
)

// ErrBadPayload marks a payload gonogo cannot act on and did not expect
// from a person: another app's action id or modal, a forged or truncated
// button value or private_metadata, a payload with fields missing, a bot's
// message. The bot logs it and changes nothing.
var ErrBadPayload = errors.New("not a payload gonogo can act on")

// ErrNeedsFileInfo is returned by CheckPlanFile for a file Slack described
// by its id only (files in channels shared with other organizations arrive
// as {"id", "file_access": "check_file_info"}): look it up with files.info,
// convert it with FileRefFrom and check again.
var ErrNeedsFileInfo = errors.New("only the file's id was sent: its details must be looked up with files.info")

// InputError is input a person can correct. Problem says what is wrong and
// where, in words for the person who typed it; Usage, when set, is the
// usage of the command concerned, shown with it; Block, when set, is the
// modal input block the problem is about, so a view_submission can be
// answered with a field error next to the input.
type InputError struct {
	Problem string
	Usage   string
	Block   string
}

func (e *InputError) Error() string {
	if e.Usage == "" {
		return e.Problem
	}
	return e.Problem + "\nusage:\n" + e.Usage
}

func badPayload(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadPayload, fmt.Sprintf(format, args...))
}

// validID accepts Slack ids (U…, W…, T…, C…, F…, views' V…), which are
// letters and digits; the check keeps junk out of keys and logs.
func validID(s string) bool {
	return s != "" && len(s) <= 64 && only(s, upperLetters+lowerLetters+digits+"_-")
}

// The characters of the ids and values gonogo reads back: ASCII only, so
// that what is checked is what a person sees.
const (
	digits       = "0123456789"
	lowerLetters = "abcdefghijklmnopqrstuvwxyz"
	upperLetters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
)

// only reports whether every character of s is one of set.
func only(s, set string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return !strings.ContainsRune(set, r) })
}

// validTS accepts a Slack message timestamp: digits, a dot, digits.
func validTS(s string) bool {
	sec, frac, ok := strings.Cut(s, ".")
	return ok && len(s) <= 32 && sec != "" && frac != "" && only(sec, digits) && only(frac, digits)
}

// checkIDs checks name/value pairs of required ids.
func checkIDs(what string, pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		name, v := pairs[i], pairs[i+1]
		if v == "" {
			return badPayload("%s: no %s", what, name)
		}
		if !validID(v) {
			return badPayload("%s: invalid %s %q", what, name, clip(v, 40))
		}
	}
	return nil
}

// checkTSs checks name/value pairs of required message timestamps.
func checkTSs(what string, pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		name, v := pairs[i], pairs[i+1]
		if v == "" {
			return badPayload("%s: no %s", what, name)
		}
		if !validTS(v) {
			return badPayload("%s: invalid %s %q", what, name, clip(v, 40))
		}
	}
	return nil
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// clip shortens s to at most n characters for a message.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "..."
}
