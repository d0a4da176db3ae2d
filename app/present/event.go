package present

import (
	"strconv"
	"time"

	"github.com/calendar/eventcal/repository"
)

// Event builds the Event object: the original plugin's keys in its order,
// then ticketed, language, translations and recurrence.
func (rn *Renderer) Event(p *repository.Post, l *Linked, v View) *Obj {
	return rn.completeEvent(rn.eventHead(p, v), p, l, v)
}

// ListedEvent is Event for an event of a list page: the fields
// that depend on the post alone (eventHead) are built once per decoded
// record and language (linkcache.go), p being the linked-record cache's
// record. An event without a start is rendered afresh: its zone
// abbreviation is the one in effect now.
func (rn *Renderer) ListedEvent(p *repository.Post, l *Linked, v View) *Obj {
	if p.Event == nil || p.Event.StartUTC.IsZero() {
		return rn.Event(p, l, v)
	}
	k := renderedKey{id: p.ID, lang: v.Lang, single: v.Single, kind: renderedEvent}
	head := rn.links.rendered(k, p, nil, 0, func() *Obj { return rn.eventHead(p, v).Freeze() })
	return rn.completeEvent(copyObj(head, 2), p, l, v)
}

// Positions of the fields eventHead leaves empty for completeEvent.
const (
	evImage      = 15
	evCategories = 35
	evTags       = 36
	evVenue      = 37
	evOrganizer  = 38
)

// eventHead builds every field of the Event object, in order, that depends
// only on the post, the language and the settings; the linked ones (image,
// categories, tags, venue, organizer) are left nil at their positions and
// json_ld is not added. A head may be shared: it is copied, never changed.
func (rn *Renderer) eventHead(p *repository.Post, v View) *Obj {
	e := p.Event
	if e == nil {
		e = &repository.EventFields{}
	}
	def := rn.cfg.DefaultLanguage
	loc, tzName := rn.EventZone(e)
	o := NewObjN(45)
	o.Add("id", p.ID)
	rn.addGlobalID(o, p.ID)
	rn.addAuthorStatusDates(o, p)
	permalink := rn.permalink(p, v.Lang)
	o.Add("url", permalink)
	o.Add("rest_url", rn.APIBase(v.Lang)+"/events/"+strconv.FormatInt(p.ID, 10))
	o.Add("title", p.Title.Get(v.Lang, def, rn.cfg.Languages...))
	o.Add("description", p.Content.Get(v.Lang, def, rn.cfg.Languages...))
	o.Add("excerpt", p.Excerpt.Get(v.Lang, def, rn.cfg.Languages...))
	o.Add("slug", p.Slug.Get(v.Lang, def, rn.cfg.Languages...))
	o.Add("image", nil)
	o.Add("all_day", e.AllDay)
	o.Add("start_date", e.StartLocal)
	o.Add("start_date_details", dateDetails(e.StartLocal))
	o.Add("end_date", e.EndLocal)
	o.Add("end_date_details", dateDetails(e.EndLocal))
	us, ue := localDate(e.StartUTC, time.UTC), localDate(e.EndUTC, time.UTC)
	o.Add("utc_start_date", us)
	o.Add("utc_start_date_details", dateDetails(us))
	o.Add("utc_end_date", ue)
	o.Add("utc_end_date_details", dateDetails(ue))
	o.Add("timezone", tzName)
	o.Add("timezone_abbr", zoneAbbr(tzName, loc, e.StartUTC))
	cost, details := formatCost(e.Cost)
	o.Add("cost", cost)
	o.Add("cost_details", details)
	website := permalink
	if e.Website != nil {
		website = *e.Website
	}
	o.Add("website", website)
	o.Add("show_map", e.ShowMap)
	o.Add("show_map_link", e.ShowMapLink)
	o.Add("hide_from_listings", e.HideFromListings)
	o.Add("sticky", e.Sticky)
	o.Add("featured", e.Featured)
	o.Add("categories", nil)
	o.Add("tags", nil)
	o.Add("venue", nil)
	o.Add("organizer", nil)
	o.Add("custom_fields", []any{})
	o.Add("ticketed", e.Ticketed)
	rn.addLanguages(o, p, v.Lang)
	o.Add("recurrence", Recurrence(e.Recurrence))
	if o.keys[evImage] != "image" || o.keys[evCategories] != "categories" || o.keys[evTags] != "tags" ||
		o.keys[evVenue] != "venue" || o.keys[evOrganizer] != "organizer" {
		panic("eventHead: the positions of the linked fields moved")
	}
	return o
}

// completeEvent fills an event's head (eventHead: a new one, or a copy
// of a shared one) with what the event links to, and json_ld for single
// reads.
func (rn *Renderer) completeEvent(o *Obj, p *repository.Post, l *Linked, v View) *Obj {
	e := p.Event
	if e == nil {
		e = &repository.EventFields{}
	}
	o.put(evImage, rn.renderImage(l.posts[p.ImageID]))
	o.put(evCategories, rn.renderEmbeddedTerms(e.Categories, l, v.Lang))
	o.put(evTags, rn.renderEmbeddedTerms(e.Tags, l, v.Lang))
	var venues []any
	for _, id := range e.Venues {
		if vp := l.posts[id]; vp != nil && vp.Kind == repository.KindVenue {
			venues = append(venues, rn.LinkedPlace(vp, l, v, true))
		}
	}
	switch len(venues) {
	case 0:
		o.put(evVenue, []any{})
	case 1:
		o.put(evVenue, venues[0])
	default:
		o.put(evVenue, venues)
	}
	orgs := []any{}
	for _, id := range e.Organizers {
		if op := l.posts[id]; op != nil && op.Kind == repository.KindOrganizer {
			orgs = append(orgs, rn.LinkedPlace(op, l, v, false))
		}
	}
	o.put(evOrganizer, orgs)
	if v.Single {
		o.Add("json_ld", rn.eventJSONLD(o, venues, orgs))
	}
	return o
}
