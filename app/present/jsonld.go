package present

import (
	"fmt"
	"time"

	"github.com/calendar/eventcal/app/datetext"
	"github.com/calendar/eventcal/repository"
)

// eventJSONLD is the schema.org Event of a rendered event.
func (rn *Renderer) eventJSONLD(o *Obj, venues, orgs []any) *Obj {
	ld := NewObj().Set("@context", "http://schema.org").Set("@type", "Event")
	name, _ := o.Get("title")
	desc, _ := o.Get("description")
	ld.Set("name", name).Set("description", desc)
	if img, ok := o.Get("image"); ok {
		if io, ok := img.(*Obj); ok {
			u, _ := io.Get("url")
			ld.Set("image", u)
		}
	}
	u, _ := o.Get("url")
	ld.Set("url", u)
	ld.Set("startDate", isoDate(o, "utc_start_date"))
	ld.Set("endDate", isoDate(o, "utc_end_date"))
	if st, _ := o.Get("status"); st == repository.StatusPublish {
		ld.Set("eventStatus", "https://schema.org/EventScheduled")
	}
	if len(venues) > 0 {
		if vo, ok := venues[0].(*Obj); ok {
			ld.Set("location", rn.placeJSONLD(vo))
		}
	}
	if len(orgs) > 0 {
		var people []any
		for _, x := range orgs {
			if oo, ok := x.(*Obj); ok {
				people = append(people, rn.personJSONLD(oo))
			}
		}
		ld.Set("organizer", people)
	}
	if details, ok := o.Get("cost_details"); ok {
		if d, ok := details.(*Obj); ok {
			if vals, _ := d.Get("values"); len(vals.([]string)) > 0 {
				offer := NewObj().Set("@type", "Offer").Set("price", vals.([]string)[0])
				if sym, _ := d.Get("currency_symbol"); sym != "" {
					offer.Set("priceCurrency", sym)
				}
				offer.Set("url", u)
				ld.Set("offers", offer)
			}
		}
	}
	return ld
}

// isoDate turns a rendered UTC date into ISO 8601.
func isoDate(o *Obj, key string) string {
	v, _ := o.Get(key)
	t, err := time.Parse(datetext.Layout, fmt.Sprint(v))
	if err != nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// placeJSONLD is the schema.org Place of a rendered venue.
func (rn *Renderer) placeJSONLD(o *Obj) *Obj {
	ld := NewObj().Set("@context", "http://schema.org").Set("@type", "Place")
	str := func(k string) string {
		v, _ := o.Get(k)
		x, _ := v.(string)
		return x
	}
	ld.Set("name", str("venue")).Set("description", str("description")).Set("url", str("url"))
	addr := NewObj().Set("@type", "PostalAddress")
	if v := str("address"); v != "" {
		addr.Set("streetAddress", v)
	}
	if v := str("city"); v != "" {
		addr.Set("addressLocality", v)
	}
	if v := str("stateprovince"); v != "" {
		addr.Set("addressRegion", v)
	}
	if v := str("zip"); v != "" {
		addr.Set("postalCode", v)
	}
	if v := str("country"); v != "" {
		addr.Set("addressCountry", v)
	}
	ld.Set("address", addr)
	if v := str("phone"); v != "" {
		ld.Set("telephone", v)
	}
	if lat, ok := o.Get("geo_lat"); ok {
		lng, _ := o.Get("geo_lng")
		ld.Set("geo", NewObj().Set("@type", "GeoCoordinates").Set("latitude", lat).Set("longitude", lng))
	}
	return ld
}

// personJSONLD is the schema.org Person of a rendered organizer.
func (rn *Renderer) personJSONLD(o *Obj) *Obj {
	ld := NewObj().Set("@context", "http://schema.org").Set("@type", "Person")
	for _, kv := range [][2]string{{"organizer", "name"}, {"description", "description"}, {"url", "url"}, {"phone", "telephone"}, {"email", "email"}, {"website", "sameAs"}} {
		if v, ok := o.Get(kv[0]); ok {
			if sv, _ := v.(string); sv != "" {
				ld.Set(kv[1], sv)
			}
		}
	}
	return ld
}
