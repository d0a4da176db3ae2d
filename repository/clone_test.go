package repository

import (
	"reflect"
	"testing"
	"time"
)

// fill sets every field reachable from v to a non-zero value: pointers
// point at filled values, slices and maps hold one filled element. A field
// added to Post later is filled too, so TestPostCloneSharesNothing covers it.
func fill(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Unix(int64(1_700_000_000+*n), 0).UTC()))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n)
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), n)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, n)
		fill(e, n)
		v.SetMapIndex(k, e)
	case reflect.String:
		v.SetString("s" + string(rune('a'+*n%26)))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(*n))
	case reflect.Float64:
		v.SetFloat(float64(*n) + 0.5)
	}
}

// shared returns the path of the first pointer, slice or map a and b
// share, "" when they share none.
func shared(a, b reflect.Value, path string) string {
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() {
			return ""
		}
		if a.Pointer() == b.Pointer() {
			return path
		}
		return shared(a.Elem(), b.Elem(), path)
	case reflect.Slice:
		if a.Len() > 0 && a.Pointer() == b.Pointer() {
			return path
		}
		for i := 0; i < a.Len(); i++ {
			if p := shared(a.Index(i), b.Index(i), path+"[]"); p != "" {
				return p
			}
		}
	case reflect.Map:
		if !a.IsNil() && a.Pointer() == b.Pointer() {
			return path
		}
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if a.Type().Field(i).IsExported() {
				if p := shared(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); p != "" {
					return p
				}
			}
		}
	}
	return ""
}

func TestPostCloneSharesNothing(t *testing.T) {
	var p Record
	n := 0
	fill(reflect.ValueOf(&p).Elem(), &n)
	c := p.Clone()
	if !reflect.DeepEqual(&p, c) {
		t.Fatalf("clone differs:\n%+v\n%+v", p, *c)
	}
	if path := shared(reflect.ValueOf(&p), reflect.ValueOf(c), "Post"); path != "" {
		t.Fatalf("clone shares %s with the original", path)
	}
}

func TestPostCloneKeepsNilAndEmpty(t *testing.T) {
	tests := []struct {
		name string
		p    *Record
	}{
		{"nil post", nil},
		{"bare post", &Record{ID: 1, Kind: KindVenue}},
		{"empty lists stay empty", &Record{Kind: KindEvent, Title: Text{}, Event: &EventFields{Categories: []int64{}, Tags: []int64{},
			Venues: []int64{}, Organizers: []int64{}, Overrides: []OccurrenceOverride{{Key: "k", Venues: &[]int64{}}}}}},
		{"nil lists stay nil", &Record{Kind: KindEvent, Event: &EventFields{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if c := tt.p.Clone(); !reflect.DeepEqual(tt.p, c) {
				t.Fatalf("clone differs:\n%#v\n%#v", tt.p, c)
			}
		})
	}
}
