package recurrence

import (
	"fmt"
	"sync/atomic"

	"github.com/calendar/eventcal/app/calendar/recurrence/internal/rrule"
)

// Work bounds of an expansion. Expanding a rule examines candidate days:
// one per period of a DAILY rule, up to 7 per WEEKLY period, 31 per
// MONTHLY period and 366 per YEARLY period, each examined once more per
// BYSETPOS value. That count, not the number of dates the rule gives, is
// the rule's work: a rule that rarely or never gives a date costs as much
// as one that gives a date on every candidate day.
const (
	// RuleBudget bounds the work of one rule: 80,000 candidate days,
	// 200 years of a DAILY or YEARLY rule, a few milliseconds of CPU.
	RuleBudget = 80_000
	// SeriesBudget bounds the work of one series, its rules together:
	// each of a series' n rules gets SeriesBudget/n (at most RuleBudget).
	SeriesBudget = 200_000
	// MaxSeriesYears bounds how far after its start a series is expanded.
	// A rule is followed for MaxSeriesYears, or for fewer years when its
	// budget does not cover that many (spanYears): its expansion ends
	// there, and a feed writes that end as the rule's UNTIL.
	MaxSeriesYears = 200
	// MinSeriesYears: a rule whose budget covers fewer years is refused.
	MinSeriesYears = 10
)

// Work counts the work of expansions (candidate days examined, as the
// budgets count it). A Work may be shared by concurrent expansions.
type Work struct{ n atomic.Int64 }

func (w *Work) add(n int) {
	if w != nil {
		w.n.Add(int64(n))
	}
}

// Iterations returns the work counted so far.
func (w *Work) Iterations() int64 { return w.n.Load() }

// ruleLimit is the work budget of each rule of a series of n rules.
func ruleLimit(n int) int {
	return min(RuleBudget, SeriesBudget/max(n, 1))
}

// spanYears returns how many years after the series' start the rule can
// be followed within limit: the most years (up to MaxSeriesYears) whose
// candidate days, counted generously (whole periods, two more than the
// years hold), stay within limit. It depends on the rule alone, so a feed
// can state it.
func spanYears(o *rrule.ROption, limit int) int {
	perYear, perPeriod := 1, 366
	switch o.Freq {
	case rrule.DAILY:
		perYear, perPeriod = 366, 1
	case rrule.WEEKLY:
		perYear, perPeriod = 53, 7
	case rrule.MONTHLY:
		perYear, perPeriod = 12, 31
	}
	interval := max(o.Interval, 1)
	cost := func(y int) int {
		periods := (y*perYear+interval-1)/interval + 2
		return periods * perPeriod * (1 + len(o.Bysetpos))
	}
	for y := MaxSeriesYears; y > 0; y-- {
		if cost(y) <= limit {
			return y
		}
	}
	return 0
}

// neverOccurs returns why a rule can never give a date through its
// ordinals (BYSETPOS beyond the candidates of a period, a BYDAY ordinal
// beyond the weekdays of a month), or "". raw holds the rule's parts as
// written. What it cannot decide is bounded by the budget.
func neverOccurs(o *rrule.ROption, raw map[string]string) string {
	inMonth := o.Freq == rrule.MONTHLY || o.Freq == rrule.YEARLY && len(o.Bymonth) > 0
	if inMonth && len(o.Byweekno) == 0 {
		for _, w := range o.Byweekday {
			if n := w.N(); n > 5 || n < -5 {
				return fmt.Sprintf("BYDAY=%s can never occur: a month has at most 5 of each weekday, so %s is never a date", raw["BYDAY"], w)
			}
		}
	}
	if len(o.Bysetpos) == 0 {
		return ""
	}
	n, per := candidatesPerPeriod(o)
	for _, pos := range o.Bysetpos {
		if pos <= n && pos >= -n {
			return ""
		}
	}
	return fmt.Sprintf("BYSETPOS=%s can never select a date: %s", raw["BYSETPOS"], per)
}

// candidatesPerPeriod returns an upper bound of the candidate dates one
// period of the rule holds (what BYSETPOS selects from), and that said in
// words.
func candidatesPerPeriod(o *rrule.ROption) (int, string) {
	dayRules := len(o.Byweekno) + len(o.Byyearday) + len(o.Bymonthday) + len(o.Byweekday)
	plural := func(n int) string {
		if n == 1 {
			return "one candidate date"
		}
		return fmt.Sprintf("at most %d candidate dates", n)
	}
	months := 12
	if len(o.Bymonth) > 0 {
		months = len(distinct(o.Bymonth))
	}
	weekdays := func(ordinalPer, plainPer int) int {
		k := 0
		for _, w := range o.Byweekday {
			if w.N() != 0 {
				k += ordinalPer
			} else {
				k += plainPer
			}
		}
		return k
	}
	switch o.Freq {
	case rrule.DAILY:
		return 1, "FREQ=DAILY gives one candidate date per day"
	case rrule.WEEKLY:
		n := 1
		if len(o.Byweekday) > 0 {
			seen := map[int]bool{}
			for _, w := range o.Byweekday {
				seen[w.Day()] = true
			}
			n = len(seen)
		} else if dayRules > 0 || len(o.Bymonth) > 0 {
			n = 7
		}
		if len(o.Byweekday) == 0 && dayRules == 0 {
			return n, "FREQ=WEEKLY with no BYDAY gives one candidate date per week (the start's weekday)"
		}
		return n, fmt.Sprintf("FREQ=WEEKLY with these BY* parts gives %s per week", plural(n))
	case rrule.MONTHLY:
		if dayRules == 0 {
			return 1, "FREQ=MONTHLY with no BYDAY, BYMONTHDAY or BYYEARDAY gives one candidate date per month (the start's day of the month)"
		}
		n := 31
		if len(o.Bymonthday) > 0 {
			n = min(n, len(distinct(o.Bymonthday)))
		}
		if len(o.Byweekday) > 0 {
			n = min(n, weekdays(1, 5))
		}
		if len(o.Byyearday) > 0 {
			n = min(n, len(distinct(o.Byyearday)))
		}
		return n, fmt.Sprintf("FREQ=MONTHLY with these BY* parts gives %s per month", plural(n))
	default:
		if dayRules == 0 {
			n := 1
			if len(o.Bymonth) > 0 {
				n = months
			}
			return n, fmt.Sprintf("FREQ=YEARLY with no BYDAY, BYMONTHDAY, BYYEARDAY or BYWEEKNO gives %s per year (the start's day of the month in each month given)", plural(n))
		}
		n := 366
		if len(o.Bymonthday) > 0 {
			n = min(n, len(distinct(o.Bymonthday))*months)
		}
		if len(o.Byyearday) > 0 {
			n = min(n, len(distinct(o.Byyearday)))
		}
		if len(o.Byweekno) > 0 {
			n = min(n, 7*len(distinct(o.Byweekno)))
		}
		if len(o.Byweekday) > 0 {
			if len(o.Bymonth) > 0 {
				n = min(n, weekdays(months, 5*months))
			} else {
				n = min(n, weekdays(1, 53))
			}
		}
		return n, fmt.Sprintf("FREQ=YEARLY with these BY* parts gives %s per year", plural(n))
	}
}

func distinct(list []int) map[int]bool {
	m := make(map[int]bool, len(list))
	for _, v := range list {
		m[v] = true
	}
	return m
}
