package storage

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"time"
)

// The store's own records, which nothing but the store reads. They carry
// record.Version and are refused, by record.CheckVersion, when a newer
// gonogo wrote them. Runs, plans, events and summaries are kept in the
// records of package record.

// keyRecord remembers which change an idempotency key made.
type keyRecord struct {
	V   int    `json:"v"`
	Run string `json:"run"`
	Seq uint64 `json:"seq"`
}

// fileRecord is a pending file write. Its body follows the record in the
// stored value (see frame), unless it is the body of an artifact stored in
// the same commit, which Ref names instead of storing it twice.
type fileRecord struct {
	V    int     `json:"v"`
	Run  string  `json:"run"`
	Path string  `json:"path"`
	From string  `json:"from,omitempty"`
	Ref  *artRef `json:"ref,omitempty"`
}

type artRef struct {
	Step    int `json:"step"`
	Attempt int `json:"attempt"`
	Version int `json:"version"`
}

// inboxRecord heads a request kept in the inbox; the request is the body.
type inboxRecord struct {
	V        int       `json:"v"`
	Received time.Time `json:"received,omitzero"`
}

// frame stores a JSON header and a raw body in one value: the header's
// length (4 bytes, big-endian), the header, the body. Bodies of up to
// megabytes stay raw instead of growing by a third in base64.
func frame(header any, body []byte) ([]byte, error) {
	h, err := json.Marshal(header)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 4, 4+len(h)+len(body))
	binary.BigEndian.PutUint32(out, uint32(len(h)))
	out = append(out, h...)
	return append(out, body...), nil
}

// unframe splits a framed value, decoding the header into header. The body
// aliases v: copy it before the transaction ends.
func unframe(v []byte, header any) ([]byte, error) {
	if len(v) < 4 {
		return nil, errors.New("framed record too short")
	}
	n := binary.BigEndian.Uint32(v)
	if uint64(n) > uint64(len(v)-4) {
		return nil, errors.New("framed record header runs past its end")
	}
	if err := json.Unmarshal(v[4:4+n], header); err != nil {
		return nil, err
	}
	return v[4+n:], nil
}
