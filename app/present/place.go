package present

import (
	"strconv"
	"time"

	"github.com/calendar/eventcal/repository"
)

// renderImage is the Image object (url, id, extension, then the size
// metadata, as the original plugin gives it), or false.
func (rn *Renderer) renderImage(img *repository.Post) any {
	if img == nil || img.Image == nil {
		return false
	}
	o := NewObj().Set("url", img.Image.URL).Set("id", img.ID)
	if img.Image.Extension != "" {
		o.Set("extension", img.Image.Extension)
	}
	return o
}

// addAuthorStatusDates adds the fields every post response has after its
// IDs, in the original plugin's order: author, status and the publish and
// modified dates in the site zone and in UTC.
func (rn *Renderer) addAuthorStatusDates(o *Obj, p *repository.Post) {
	o.Add("author", strconv.FormatInt(p.Author, 10))
	o.Add("status", p.Status)
	o.Add("date", localDate(p.Date, rn.cfg.Location))
	o.Add("date_utc", localDate(p.Date, time.UTC))
	o.Add("modified", localDate(p.Modified, rn.cfg.Location))
	o.Add("modified_utc", localDate(p.Modified, time.UTC))
}

// placeHeader starts a venue or organizer object with the fields both
// share, in the original plugin's order; nameKey holds the name.
func (rn *Renderer) placeHeader(p *repository.Post, l *Linked, v View, nameKey string) *Obj {
	def := rn.cfg.DefaultLanguage
	o := NewObjN(24)
	o.Add("id", p.ID)
	rn.addAuthorStatusDates(o, p)
	o.Add("url", rn.permalink(p, v.Lang))
	o.Add(nameKey, p.Title.Get(v.Lang, def, rn.cfg.Languages...))
	o.Add("description", p.Content.Get(v.Lang, def, rn.cfg.Languages...))
	o.Add("excerpt", p.Excerpt.Get(v.Lang, def, rn.cfg.Languages...))
	o.Add("slug", p.Slug.Get(v.Lang, def, rn.cfg.Languages...))
	o.Add("image", rn.renderImage(l.posts[p.ImageID]))
	return o
}

// Venue builds the Venue object as the original plugin does: empty values
// are dropped before show_map, show_map_link and the global IDs are added.
func (rn *Renderer) Venue(p *repository.Post, l *Linked, v View) *Obj {
	vf := p.Venue
	if vf == nil {
		vf = &repository.VenueFields{}
	}
	o := rn.placeHeader(p, l, v, "venue")
	o.Add("address", vf.Address)
	o.Add("city", vf.City)
	o.Add("country", vf.Country)
	o.Add("province", vf.Province)
	o.Add("state", vf.State)
	o.Add("zip", vf.Zip)
	o.Add("phone", vf.Phone)
	o.Add("website", vf.Website)
	o.Add("stateprovince", vf.StateProvince)
	if vf.GeoLat != nil && vf.GeoLng != nil {
		o.Add("geo_lat", *vf.GeoLat)
		o.Add("geo_lng", *vf.GeoLng)
	}
	if v.Single {
		o.Add("json_ld", rn.placeJSONLD(o))
	}
	dropEmpty(o)
	o.Add("show_map", vf.ShowMap)
	o.Add("show_map_link", vf.ShowMapLink)
	rn.addGlobalID(o, p.ID)
	rn.addLanguages(o, p, v.Lang)
	return o
}

// Organizer builds the Organizer object as the original plugin does (empty
// values dropped).
func (rn *Renderer) Organizer(p *repository.Post, l *Linked, v View) *Obj {
	of := p.Organizer
	if of == nil {
		of = &repository.OrganizerFields{}
	}
	o := rn.placeHeader(p, l, v, "organizer")
	o.Add("phone", of.Phone)
	o.Add("website", of.Website)
	o.Add("email", of.Email)
	if v.Single {
		o.Add("json_ld", rn.personJSONLD(o))
	}
	rn.addGlobalID(o, p.ID)
	dropEmpty(o)
	rn.addLanguages(o, p, v.Lang)
	return o
}

// LinkedPlace renders p as a venue (Venue) or an organizer
// (Organizer), reused from the linked-record cache while p and its
// image are the same decoded records (linkcache.go).
func (rn *Renderer) LinkedPlace(p *repository.Post, l *Linked, v View, venue bool) *Obj {
	k := renderedKey{id: p.ID, lang: v.Lang, single: v.Single, kind: renderedOrganizer}
	render := rn.Organizer
	if venue {
		k.kind, render = renderedVenue, rn.Venue
	}
	img := l.posts[p.ImageID]
	return rn.links.rendered(k, p, img, 0, func() *Obj { return render(p, l, v).Freeze() })
}

// dropEmpty removes empty and falsy values, as the original does for venues
// and organizers.
func dropEmpty(o *Obj) {
	o.Filter(func(_ string, v any) bool {
		switch x := v.(type) {
		case string:
			return x != "" && x != "0"
		case bool:
			return x
		case nil:
			return false
		}
		return true
	})
}
