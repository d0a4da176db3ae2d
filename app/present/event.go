package present

import (
	"bytes"
	"strconv"
	"time"

	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
)

// Event is the Event object: the original plugin's keys in its order,
// then ticketed, language, translations, recurrence, event_status,
// event_status_reason and source (on the API's own root), and the fields
// some routes add (json_ld on single reads, occurrence on occurrences,
// parent on a detached occurrence, changed_occurrences in webhook
// messages, highlight on searches).
//
// An event from ListedEvent writes its post-only fields (ID to Recurrence
// but the linked ones) from the kept encoding of its head: change those
// only through RedactEvent, which drops it. Its linked values (Image,
// Categories, Tags, Venue, Organizer) are shared kept renderings: replace
// them, never change them.
type Event struct {
	ID                  int64
	GlobalID            string
	GlobalIDLineage     []string
	Author              string
	Status              string
	Date                string
	DateUTC             string
	Modified            string
	ModifiedUTC         string
	URL                 string
	RestURL             string
	Title               string
	Description         string
	Excerpt             string
	Slug                string
	Image               *Image // nil: false
	AllDay              bool
	StartDate           string
	StartDateDetails    DateDetails
	EndDate             string
	EndDateDetails      DateDetails
	UTCStartDate        string
	UTCStartDateDetails DateDetails
	UTCEndDate          string
	UTCEndDateDetails   DateDetails
	Timezone            string
	TimezoneAbbr        string
	Cost                string
	CostDetails         CostDetails
	Website             string
	ShowMap             bool
	ShowMapLink         bool
	HideFromListings    bool
	Sticky              bool
	Featured            bool
	Categories          []*EmbeddedLabel
	Tags                []*EmbeddedLabel
	// Venue is written as [] when empty, as the venue itself when there
	// is one, else as a list.
	Venue     []*Venue
	Organizer []*Organizer
	// custom_fields is always [].
	Ticketed     bool
	Language     string
	Translations []string
	Recurrence   *Recurrence // nil: null
	// EventStatus (one of repository.EventStatuses) and EventStatusReason
	// are the event's (an occurrence's own) status and its reason. They
	// are written only when statusFields is set: on the API's own root,
	// not on The Events Calendar's, whose events have no such fields.
	EventStatus       string
	EventStatusReason string
	statusFields      bool
	// Source is the source an imported event came from (nil: made
	// here), written after event_status_reason, on the API's own root
	// only (statusFields), as null for an event made here.
	Source *SourceLink
	// JSONLD is set on single reads (omitted when nil).
	JSONLD *EventLD
	// Occurrence is set on an occurrence shaped like an event.
	Occurrence *OccurrenceRef
	// Parent is set on the event a detached occurrence became.
	Parent *int64
	// ChangedOccurrences is set (possibly empty) on a series in webhook
	// messages; nil omits it.
	ChangedOccurrences []ChangedOccurrence
	// Highlight is set on a search that asks for it.
	Highlight *Highlight

	// redacted writes the protected fields blanked (RedactEvent).
	redacted bool
	// head is the kept encoding of the fields that depend on the post
	// alone (ListedEvent), shared by every copy of the kept head; nil
	// writes them field by field. RedactEvent drops it.
	head *eventHeadEnc
}

// eventHeadEnc is the encoding of an event's post-only fields in the
// three runs the linked fields split them into: up to slug, all_day to
// featured, custom_fields to recurrence (each with its leading comma but
// the first).
type eventHeadEnc struct{ pre, mid, post []byte }

// Image is the Image object (url, id, extension when known).
type Image struct {
	URL       string
	ID        int64
	Extension string
	// Width, Height, Filesize and Sizes are written where known (0, nil:
	// omitted); only The Events Calendar's root has them.
	Width, Height, Filesize int64
	Sizes                   []repository.ImageSize
}

func (im *Image) writeJSON(buf *bytes.Buffer) error {
	if im == nil {
		buf.WriteString("false")
		return nil
	}
	w := openObj(buf)
	w.str("url", im.URL)
	w.int("id", im.ID)
	w.strSet("extension", im.Extension)
	for _, f := range []struct {
		k string
		v int64
	}{{"width", im.Width}, {"height", im.Height}, {"filesize", im.Filesize}} {
		if f.v > 0 {
			w.int(f.k, f.v)
		}
	}
	if len(im.Sizes) > 0 {
		w.typed("sizes", imageSizes(im.Sizes))
	}
	return w.close()
}

// imageSizes writes an image's smaller copies as the original does: an
// object by size name of {width, height, mime-type, url}.
type imageSizes []repository.ImageSize

func (s imageSizes) writeJSON(buf *bytes.Buffer) error {
	w := openObj(buf)
	for _, z := range s {
		w.typed(z.Name, imageSize(z))
	}
	return w.close()
}

type imageSize repository.ImageSize

func (z imageSize) writeJSON(buf *bytes.Buffer) error {
	w := openObj(buf)
	w.int("width", z.Width)
	w.int("height", z.Height)
	w.strSet("mime-type", z.MimeType)
	w.str("url", z.URL)
	return w.close()
}

// MarshalJSON writes the image (false when nil).
func (im *Image) MarshalJSON() ([]byte, error) { return marshal(im) }

// MarshalJSON writes the event.
func (e *Event) MarshalJSON() ([]byte, error) { return marshal(e) }

// writeHeadPre writes the fields before image (the object's opening brace
// included).
func (e *Event) writeHeadPre(w *objWriter) {
	e.writeIdentity(w)
	w.str("description", e.Description)
	w.str("excerpt", e.Excerpt)
	w.str("slug", e.Slug)
}

// writeIdentity writes the fields from id to title, which a redacted
// event keeps too.
func (e *Event) writeIdentity(w *objWriter) {
	w.int("id", e.ID)
	w.str("global_id", e.GlobalID)
	w.strs("global_id_lineage", e.GlobalIDLineage)
	w.str("author", e.Author)
	w.str("status", e.Status)
	w.str("date", e.Date)
	w.str("date_utc", e.DateUTC)
	w.str("modified", e.Modified)
	w.str("modified_utc", e.ModifiedUTC)
	w.str("url", e.URL)
	w.str("rest_url", e.RestURL)
	w.str("title", e.Title)
}

// writeHeadMid writes the fields from all_day to featured.
func (e *Event) writeHeadMid(w *objWriter) {
	w.bool("all_day", e.AllDay)
	e.writeDates(w)
	w.str("cost", e.Cost)
	w.typed("cost_details", &e.CostDetails)
	w.str("website", e.Website)
	w.bool("show_map", e.ShowMap)
	w.bool("show_map_link", e.ShowMapLink)
	w.bool("hide_from_listings", e.HideFromListings)
	w.bool("sticky", e.Sticky)
	w.bool("featured", e.Featured)
}

// writeDates writes the fields from start_date to timezone_abbr, which a
// redacted event keeps too.
func (e *Event) writeDates(w *objWriter) {
	w.str("start_date", e.StartDate)
	w.typed("start_date_details", &e.StartDateDetails)
	w.str("end_date", e.EndDate)
	w.typed("end_date_details", &e.EndDateDetails)
	w.str("utc_start_date", e.UTCStartDate)
	w.typed("utc_start_date_details", &e.UTCStartDateDetails)
	w.str("utc_end_date", e.UTCEndDate)
	w.typed("utc_end_date_details", &e.UTCEndDateDetails)
	w.str("timezone", e.Timezone)
	w.str("timezone_abbr", e.TimezoneAbbr)
}

// writeHeadPost writes the fields from custom_fields to recurrence.
func (e *Event) writeHeadPost(w *objWriter) {
	w.raw("custom_fields", "[]")
	w.bool("ticketed", e.Ticketed)
	w.str("language", e.Language)
	w.strs("translations", e.Translations)
	w.typed("recurrence", e.Recurrence)
	if e.statusFields {
		w.str("event_status", e.EventStatus)
		w.str("event_status_reason", e.EventStatusReason)
		w.typed("source", e.Source)
	}
}

// redactedCostDetails is cost_details of a redacted event (its keys in
// the order the original plugin writes them there).
const redactedCostDetails = `{"currency_symbol":"","currency_position":"","currency_code":"","values":[]}`

func (e *Event) writeJSON(buf *bytes.Buffer) error {
	if e == nil {
		buf.WriteString("null")
		return nil
	}
	w := openObj(buf)
	if e.redacted {
		e.writeRedacted(&w)
	} else {
		if h := e.head; h != nil {
			buf.Write(h.pre)
			w.n = 1
		} else {
			e.writeHeadPre(&w)
		}
		w.typed("image", e.Image)
		if h := e.head; h != nil {
			buf.Write(h.mid)
		} else {
			e.writeHeadMid(&w)
		}
		w.typed("categories", listOf[*EmbeddedLabel](e.Categories))
		w.typed("tags", listOf[*EmbeddedLabel](e.Tags))
		switch len(e.Venue) {
		case 0:
			w.raw("venue", "[]")
		case 1:
			w.typed("venue", e.Venue[0])
		default:
			w.typed("venue", listOf[*Venue](e.Venue))
		}
		w.typed("organizer", listOf[*Organizer](e.Organizer))
		if h := e.head; h != nil {
			buf.Write(h.post)
		} else {
			e.writeHeadPost(&w)
		}
	}
	if e.JSONLD != nil {
		w.typed("json_ld", e.JSONLD)
	}
	if e.Occurrence != nil {
		w.typed("occurrence", e.Occurrence)
	}
	if e.Parent != nil {
		w.int("parent", *e.Parent)
	}
	if e.ChangedOccurrences != nil {
		w.typed("changed_occurrences", listOf[ChangedOccurrence](e.ChangedOccurrences))
	}
	if e.Highlight != nil {
		w.typed("highlight", e.Highlight)
	}
	return w.close()
}

// writeRedacted writes the fields of a password-protected event in a list
// as the original plugin does: title, slug, dates and IDs stay, the rest
// is blanked (null for the flags).
func (e *Event) writeRedacted(w *objWriter) {
	e.writeIdentity(w)
	w.str("description", "")
	w.str("excerpt", "")
	w.str("slug", e.Slug)
	w.raw("image", "false")
	w.raw("all_day", "null")
	e.writeDates(w)
	w.str("cost", "")
	w.raw("cost_details", redactedCostDetails)
	w.str("website", "")
	for _, k := range []string{"show_map", "show_map_link", "hide_from_listings", "sticky", "featured"} {
		w.raw(k, "null")
	}
	for _, k := range []string{"categories", "tags", "venue", "organizer", "custom_fields"} {
		w.raw(k, "[]")
	}
	w.raw("ticketed", "null")
	w.str("language", e.Language)
	w.strs("translations", e.Translations)
	w.typed("recurrence", e.Recurrence)
	if e.statusFields {
		w.str("event_status", e.EventStatus) // the reason is the event's text: blanked
		w.str("event_status_reason", "")
		w.typed("source", e.Source)
	}
}

// freezeHead records the encoding of the post-only fields (ListedEvent).
func (e *Event) freezeHead() {
	var buf bytes.Buffer
	w := openObj(&buf)
	e.writeHeadPre(&w)
	pre := bytes.Clone(buf.Bytes()[1:]) // writeJSON opens the object
	buf.Reset()
	w = objWriter{buf: &buf, n: 1}
	e.writeHeadMid(&w)
	mid := bytes.Clone(buf.Bytes())
	buf.Reset()
	e.writeHeadPost(&w)
	if w.err != nil {
		return
	}
	e.head = &eventHeadEnc{pre: pre, mid: mid, post: bytes.Clone(buf.Bytes())}
}

// Event renders an event for v.
func (rn *Renderer) Event(p *repository.Record, l *Linked, v View) *Event {
	e := rn.eventHead(p, v)
	rn.completeEvent(e, p, l, v)
	return e
}

// ListedEvent is Event for an event of a list page: the fields
// that depend on the post alone (eventHead) are built and encoded once
// per decoded record and language (linkcache.go), p being the
// linked-record cache's record. An event without a start is rendered
// afresh: its zone abbreviation is the one in effect now.
func (rn *Renderer) ListedEvent(p *repository.Record, l *Linked, v View) *Event {
	if p.Event == nil || p.Event.StartUTC.IsZero() {
		return rn.Event(p, l, v)
	}
	k := renderedKey{id: p.ID, lang: v.Lang, single: v.Single, kind: renderedEvent}
	head := rendered(&rn.links, k, p, nil, 0, func() *Event {
		e := rn.eventHead(p, v)
		e.freezeHead()
		return e
	})
	e := *head // the kept head is shared: complete a copy
	rn.completeEvent(&e, p, l, v)
	return &e
}

// eventHead builds every field of the Event object that depends only on
// the post, the language and the settings; the linked ones (image,
// categories, tags, venue, organizer) and json_ld are left empty.
func (rn *Renderer) eventHead(p *repository.Record, v View) *Event {
	e := p.Event
	if e == nil {
		e = &repository.EventFields{}
	}
	def := rn.cfg.DefaultLanguage
	loc, tzName := rn.EventZone(e)
	permalink := rn.permalink(p, v.Lang)
	gid := rn.globalID(p.ID)
	us, ue := localDate(e.StartUTC, time.UTC), localDate(e.EndUTC, time.UTC)
	cost, details := formatCost(e.Cost, rn.EventCurrency(e))
	website := permalink
	if e.Website != nil {
		website = *e.Website
	}
	return &Event{
		ID:                  p.ID,
		GlobalID:            gid,
		GlobalIDLineage:     []string{gid},
		Author:              strconv.FormatInt(p.Author, 10),
		Status:              p.Status,
		Date:                localDate(p.Date, rn.cfg.Location),
		DateUTC:             localDate(p.Date, time.UTC),
		Modified:            localDate(p.Modified, rn.cfg.Location),
		ModifiedUTC:         localDate(p.Modified, time.UTC),
		URL:                 permalink,
		RestURL:             rn.APIBase(v.Lang) + "/events/" + strconv.FormatInt(p.ID, 10),
		Title:               p.Title.Get(v.Lang, def, rn.cfg.Languages...),
		Description:         p.Content.Get(v.Lang, def, rn.cfg.Languages...),
		Excerpt:             p.Excerpt.Get(v.Lang, def, rn.cfg.Languages...),
		Slug:                p.Slug.Get(v.Lang, def, rn.cfg.Languages...),
		AllDay:              e.AllDay,
		StartDate:           e.StartLocal,
		StartDateDetails:    dateDetails(e.StartLocal),
		EndDate:             e.EndLocal,
		EndDateDetails:      dateDetails(e.EndLocal),
		UTCStartDate:        us,
		UTCStartDateDetails: dateDetails(us),
		UTCEndDate:          ue,
		UTCEndDateDetails:   dateDetails(ue),
		Timezone:            tzName,
		TimezoneAbbr:        zoneAbbr(tzName, loc, e.StartUTC),
		Cost:                cost,
		CostDetails:         details,
		Website:             website,
		ShowMap:             e.ShowMap,
		ShowMapLink:         e.ShowMapLink,
		HideFromListings:    e.HideFromListings,
		Sticky:              e.Sticky,
		Featured:            e.Featured,
		Ticketed:            e.Ticketed,
		Language:            rn.textLang(p.Title, v.Lang),
		Translations:        rn.translations(p.Title, p.Content, p.Excerpt),
		Recurrence:          NewRecurrence(e.Recurrence),
		EventStatus:         e.Status(),
		EventStatusReason:   e.EventStatusReason,
		statusFields:        rn.cfg.APIRoot() != config.TECRoot,
		Source:              newSourceLink(p),
	}
}

// completeEvent fills an event's head (eventHead: a new one, or a copy
// of a kept one) with what the event links to, and json_ld for single
// reads.
func (rn *Renderer) completeEvent(o *Event, p *repository.Record, l *Linked, v View) {
	e := p.Event
	if e == nil {
		e = &repository.EventFields{}
	}
	o.Image = rn.renderImage(l.posts[p.ImageID])
	o.Categories = rn.renderEmbeddedTerms(e.Categories, l, v.Lang)
	o.Tags = rn.renderEmbeddedTerms(e.Tags, l, v.Lang)
	o.Venue = nil
	for _, id := range e.Venues {
		if vp := l.posts[id]; vp != nil && vp.Kind == repository.KindVenue {
			o.Venue = append(o.Venue, rn.LinkedVenue(vp, l, v))
		}
	}
	o.Organizer = []*Organizer{}
	for _, id := range e.Organizers {
		if op := l.posts[id]; op != nil && op.Kind == repository.KindOrganizer {
			o.Organizer = append(o.Organizer, rn.LinkedOrganizer(op, l, v))
		}
	}
	if v.Single {
		o.JSONLD = rn.eventJSONLD(o)
	}
}

// WithParent sets parent (the series a detached occurrence came from) and
// returns e.
func (e *Event) WithParent(id int64) *Event {
	e.Parent = &id
	return e
}
