package memindex

// bodyChunk is the number of row bodies in each chunk of a bodyStore.
const bodyChunk = 1024

// bodyStore holds the row bodies (see rowBody), numbered from 1 (0 names
// none), counting the references to each: the rows and groups refer to
// their bodies by number, so that they hold no pointer for the garbage
// collector to follow (see row). The bodies are kept in chunks that never
// move, so that a *rowBody (at) stays valid until its body is released for
// the last time; a body released for the last time is cleared (dropping
// its slices) and its number reused.
type bodyStore struct {
	chunks []*[bodyChunk]rowBody
	// refs counts the references to each body, by number.
	refs []uint32
	// free lists the numbers of released bodies, taken again first.
	free []uint32
}

// at returns body b (not 0).
func (s *bodyStore) at(b uint32) *rowBody { return &s.chunks[b/bodyChunk][b%bodyChunk] }

// add stores a copy of r as a body of no reference yet and returns its
// number.
func (s *bodyStore) add(r *rowBody) uint32 {
	var b uint32
	if n := len(s.free); n > 0 {
		b = s.free[n-1]
		s.free = s.free[:n-1]
	} else {
		if len(s.refs) == 0 {
			s.refs = append(s.refs, 0) // number 0 names no body
		}
		b = uint32(len(s.refs))
		s.refs = append(s.refs, 0)
		if int(b/bodyChunk) == len(s.chunks) {
			s.chunks = append(s.chunks, new([bodyChunk]rowBody))
		}
	}
	*s.at(b) = *r
	return b
}

// retain counts one more reference to body b (0: none, ignored).
func (s *bodyStore) retain(b uint32) {
	if b != 0 {
		s.refs[b]++
	}
}

// release counts one reference less to body b (0: none, ignored),
// reporting whether it was the last: the body is then cleared and its
// number free.
func (s *bodyStore) release(b uint32) bool {
	if b == 0 {
		return false
	}
	if s.refs[b]--; s.refs[b] > 0 {
		return false
	}
	*s.at(b) = rowBody{}
	s.free = append(s.free, b)
	return true
}

// live returns the number of bodies held.
func (s *bodyStore) live() int { return max(len(s.refs)-1, 0) - len(s.free) }

// rowIndex holds the steps of the rows' bodies on the Index it embeds:
// reading a row's body, and setting a row so that the bodies' references
// are counted.
type rowIndex struct{ *Index }

// bodyOf returns the body of the row at slot (live).
func (x *rowIndex) bodyOf(slot uint32) *rowBody { return x.bodies.at(x.rows[slot].body) }

// groupOf returns the group that holds the row at slot (nil: the date
// order does).
func (x *groupIndex) groupOf(slot uint32) *group {
	if g := x.rows[slot].grp; g != 0 {
		return x.groups[g-1]
	}
	return nil
}

// setRow sets the row at slot to r, moving the reference to a body from
// its old one to r's (so that a body that r shares with it stays).
func (x *rowIndex) setRow(slot uint32, r row) {
	x.bodies.retain(r.body)
	if old := x.rows[slot].body; old != 0 {
		x.releaseBody(old)
	}
	x.rows[slot] = r
}

// releaseBody releases a reference to body b; a body released for the
// last time leaves likePrefixes too, since its number (and address) will
// name another.
func (x *rowIndex) releaseBody(b uint32) {
	if b == 0 {
		return
	}
	p := x.bodies.at(b)
	if x.bodies.release(b) && x.likePrefixes != nil {
		delete(x.likePrefixes, p)
	}
}
