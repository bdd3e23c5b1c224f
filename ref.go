package ctxfit

import (
	"encoding/binary"
	"fmt"

	"github.com/ctxfit/ctxfit/chunk"
	"github.com/ctxfit/ctxfit/cursor"
)

// contKind is what a continuation continues. The values are the cursor
// Kinds the guard seals.
type contKind = cursor.Kind

const (
	// contPage: the elements of an array, from pos.
	contPage = cursor.KindPage
	// contChunk: a text (a text body, a JSON string's body, the raw bytes
	// of a scalar), from pos.
	contChunk = cursor.KindChunk
	// contMembers: the members of an object, from pos.
	contMembers cursor.Kind = 3
	// contParts: opens the parts (held-back values) of a response; it
	// continues nothing itself.
	contParts cursor.Kind = 4
	// contCut: the last-resort byte cut of a snapshot, from pos.
	contCut cursor.Kind = 5
	// contResource: a resource the guard serves whole (an image or blob an
	// MCP result held back behind a resource_link).
	contResource cursor.Kind = 6
	// contDetails: the object a summary left fields out of, for a
	// drill-down (Request.Fields).
	contDetails cursor.Kind = 7
	// contSearch: the matches of a search (ref.search) in the text or
	// container data[start:end], from pos; textKind says which ("text",
	// "array" or "object"), offset is the index of the item at pos, line
	// the number of the line at pos, total the number of matches.
	contSearch cursor.Kind = 8
)

// snapRef says where a continuation finds its data: a snapshot in the
// store (store mode) or the handler's response, checked against a
// fingerprint (replay mode).
type snapRef struct {
	stored bool
	id     string // store ID, or base64url fingerprint
}

func (s snapRef) String() string {
	if s.stored {
		return "s" + s.id
	}
	return "f" + s.id
}

func parseSnapRef(v string) (snapRef, bool) {
	if len(v) < 2 {
		return snapRef{}, false
	}
	switch v[0] {
	case 's':
		return snapRef{stored: true, id: v[1:]}, true
	case 'f':
		return snapRef{id: v[1:]}, true
	}
	return snapRef{}, false
}

// ref is where a cursor leads: which data, which value in it, and where in
// that value to go on. It is sealed into a cursor (see [ref.payload]) and
// read back from one ([refOf]); nothing else encodes it.
type ref struct {
	kind contKind
	snap snapRef
	// start and end delimit the value being continued in the snapshot: an
	// array or object with its brackets, a JSON string's body without its
	// quotes, a text.
	start, end int64
	// pos is where the next page or chunk starts, within [start, end].
	pos int64
	// offset is the number of the next element or member, or for a text
	// the offset of pos from start; index is the number of the next page
	// or chunk; total is the number of elements, members or chunks.
	offset, index, total int64
	// For texts: form is how the text is sent, textKind the kind of text
	// (so a continuation cuts it as the first response did), line the
	// number of the line pos is on, lines the number of lines.
	form        chunk.Form
	textKind    chunk.Kind
	line, lines int64
	// view, in replay mode only, is the drill-down the snapshot was made
	// from ("fields=..."); "" for the response itself.
	view string
	// args, in replay mode only, are the tool arguments a continuation
	// must run the tool with, when the caller carries them in the cursor.
	args []byte
	// block is the content block of an MCP result the data is (Request.Block).
	block int64
	// mime is the media type of a resource (contResource).
	mime string
	// tokens is the snapshot's size as its first response measured it
	// (see shaper.measure), estimated when tokensEstimated is set: a
	// continuation reports it without counting the snapshot again.
	tokens          int64
	tokensEstimated bool
	// search is the search a contSearch continues, as JSON.
	search string
	// format is the format of pages (FormatTOON, or "" for JSON).
	format string
	// bytes is the length of the snapshot (0 when the cursor predates it):
	// a continuation that reads only a window of the snapshot (a
	// store.RangeReader) knows its size without reading it.
	bytes int64
	// status is the HTTP status of the response the snapshot is (see
	// Response.Status); 0 means 200, or none.
	status int64
}

// maxCarried bounds what a cursor carries of a view or of tool arguments,
// so that no cursor grows with a request's parameters.
const maxCarried = 1024

// payload seals r for req.
func (r *ref) payload(req *Request) cursor.Payload {
	var d []byte
	size := r.tokens << 1
	if r.tokensEstimated {
		size |= 1
	}
	for _, v := range [...]int64{r.start, r.end, r.pos, r.total, int64(r.form), r.line, r.lines, r.block, size} {
		d = binary.AppendUvarint(d, uint64(v))
	}
	for _, s := range [...][]byte{[]byte(r.textKind), []byte(r.view), r.args, []byte(r.mime), []byte(r.search), []byte(r.format)} {
		d = binary.AppendUvarint(d, uint64(len(s)))
		d = append(d, s...)
	}
	d = binary.AppendUvarint(d, uint64(r.bytes))
	if r.status != 0 {
		d = binary.AppendUvarint(d, uint64(r.status))
	}
	return cursor.Payload{
		Kind: r.kind, Offset: r.offset, Index: r.index,
		Scope: req.scope(), Subject: req.Subject, Order: req.boundQuery(), Filters: req.Filters,
		Snapshot: r.snap.String(), Data: d,
	}
}

var errBadRef = fmt.Errorf("%w (it does not lead to data this server keeps)", cursor.ErrInvalid)

// refOf reads the ref a cursor's payload holds.
func refOf(p cursor.Payload) (ref, error) {
	r := ref{kind: p.Kind, offset: p.Offset, index: p.Index}
	snap, ok := parseSnapRef(p.Snapshot)
	if !ok {
		return ref{}, errBadRef
	}
	r.snap = snap
	d := p.Data
	var nums [9]int64
	for i := range nums {
		v, n := binary.Uvarint(d)
		if n <= 0 || v > 1<<62 {
			return ref{}, errBadRef
		}
		nums[i], d = int64(v), d[n:]
	}
	var strs [6][]byte
	for i := range strs {
		v, n := binary.Uvarint(d)
		if n <= 0 || v > uint64(len(d)-n) {
			return ref{}, errBadRef
		}
		strs[i], d = d[n:n+int(v)], d[n+int(v):]
	}
	// Then the snapshot's length, in cursors that carry it, and its HTTP
	// status, in those that carry one.
	for i, field := range [...]*int64{&r.bytes, &r.status} {
		if len(d) == 0 {
			break
		}
		v, n := binary.Uvarint(d)
		if n <= 0 || v > [...]uint64{1 << 62, 999}[i] {
			return ref{}, errBadRef
		}
		*field, d = int64(v), d[n:]
	}
	if len(d) != 0 {
		return ref{}, errBadRef
	}
	r.start, r.end, r.pos, r.total = nums[0], nums[1], nums[2], nums[3]
	r.form, r.line, r.lines, r.block = chunk.Form(nums[4]), nums[5], nums[6], nums[7]
	r.tokens, r.tokensEstimated = nums[8]>>1, nums[8]&1 == 1
	r.textKind, r.view, r.mime, r.search, r.format = chunk.Kind(strs[0]), string(strs[1]), string(strs[3]), string(strs[4]), string(strs[5])
	if len(strs[2]) > 0 {
		r.args = strs[2]
	}
	if r.start < 0 || r.start > r.end || r.pos < r.start || r.pos > r.end || r.bytes != 0 && r.end > r.bytes {
		return ref{}, errBadRef
	}
	switch r.kind {
	case contPage, contChunk, contMembers, contParts, contCut, contResource, contDetails, contSearch:
	default:
		return ref{}, errBadRef
	}
	return r, nil
}
