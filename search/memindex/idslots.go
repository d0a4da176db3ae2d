package memindex

import "iter"

// idSlots holds the slots of each event ID (one for a single event, one
// per occurrence for a series), in the order of their occurrence keys
// (see Index.occIndex). The IDs of one document, most of them (950,000 of
// 1,000,000 events at 50,000 series), are kept in a map of one slot each,
// which holds no pointer, so that the garbage collector neither scans its
// entries nor marks a slice per ID; only those of two or more keep a
// slice.
type idSlots struct {
	one  map[int64]uint32
	many map[int64][]uint32
}

// newIDSlots returns an empty idSlots.
func newIDSlots() idSlots {
	return idSlots{one: map[int64]uint32{}, many: map[int64][]uint32{}}
}

// get returns the slots of id (none when not held), using buf for an ID
// of one slot. The slice is the map's own for an ID of more: a writer
// that changes it in place calls set.
func (m *idSlots) get(id int64, buf *[1]uint32) []uint32 {
	if s, ok := m.one[id]; ok {
		buf[0] = s
		return buf[:]
	}
	return m.many[id]
}

// has reports whether id has a slot.
func (m *idSlots) has(id int64) bool {
	if _, ok := m.one[id]; ok {
		return true
	}
	_, ok := m.many[id]
	return ok
}

// set makes slots the slots of id (none: id leaves), keeping a slice of
// two or more as is.
func (m *idSlots) set(id int64, slots []uint32) {
	switch len(slots) {
	case 0:
		delete(m.one, id)
		delete(m.many, id)
	case 1:
		delete(m.many, id)
		m.one[id] = slots[0]
	default:
		delete(m.one, id)
		m.many[id] = slots
	}
}

// slots yields every slot held, in no particular order.
func (m *idSlots) slots() iter.Seq[uint32] {
	return func(yield func(uint32) bool) {
		for _, s := range m.one {
			if !yield(s) {
				return
			}
		}
		for _, slots := range m.many {
			for _, s := range slots {
				if !yield(s) {
					return
				}
			}
		}
	}
}
