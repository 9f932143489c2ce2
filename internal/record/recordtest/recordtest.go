// Package recordtest helps test that a codec of engine values (package
// record, and the stores and backends that keep its bytes) keeps every
// field: Filler sets every field of a value, the fields added to the
// engine's types after a test was written included, and InUTC puts the
// times of two values on one footing before they are compared.
package recordtest

import (
	"fmt"
	"reflect"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// validText gives each typed state a value its parser accepts, so a
// filled value can be committed and read back.
var validText = map[reflect.Type]string{
	reflect.TypeFor[engine.RunState]():       string(engine.RunWaiting),
	reflect.TypeFor[engine.StepStatus]():     string(engine.StepInterrupted),
	reflect.TypeFor[engine.Result]():         string(engine.ResultNotExecuted),
	reflect.TypeFor[engine.DecisionKind]():   string(engine.DecideEdit),
	reflect.TypeFor[engine.Mode]():           string(engine.ModeGuardedAuto),
	reflect.TypeFor[engine.Gate]():           string(engine.GateOnEmpty),
	reflect.TypeFor[engine.EventType]():      string(engine.EvRunStarted),
	reflect.TypeFor[engine.InputKind]():      string(engine.InputWorkflow),
	reflect.TypeFor[engine.Domain]():         string(engine.DomainChaotic),
	reflect.TypeFor[engine.Category]():       string(engine.CategoryDispatch),
	reflect.TypeFor[engine.Execution]():      string(engine.ExecInlineLeaf),
	reflect.TypeFor[engine.AgentErrorKind](): string(engine.AgentErrOverloaded),
	reflect.TypeFor[engine.TimeoutAction]():  string(engine.TimeoutAbort),
}

var timeType = reflect.TypeFor[time.Time]()

// Filler sets every field of a value to something distinct and non-zero,
// so a field a codec forgets to keep shows up as a difference. Values
// filled by one Filler differ from each other too.
type Filler struct{ n int }

// Fill fills the value v points to.
func (f *Filler) Fill(v any) {
	f.fill(reflect.ValueOf(v).Elem())
}

func (f *Filler) fill(v reflect.Value) {
	f.n++
	switch v.Kind() {
	case reflect.String:
		if s, ok := validText[v.Type()]; ok {
			v.SetString(s)
		} else {
			v.SetString(fmt.Sprintf("text-%d \"quoted\" ünïcode\n", f.n))
		}
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(f.n))
	case reflect.Uint64, reflect.Uint32, reflect.Uint:
		v.SetUint(uint64(f.n))
	case reflect.Float64:
		v.SetFloat(float64(f.n) + 0.1) // not exact in binary: must still round-trip
	case reflect.Struct:
		if v.Type() == timeType {
			v.Set(reflect.ValueOf(time.Date(2025, 1, f.n%28+1, 10, 0, f.n, 123456789, time.FixedZone("", -7*3600))))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				f.fill(v.Field(i))
			}
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			f.fill(s.Index(i))
		}
		v.Set(s)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		f.fill(p.Elem())
		v.Set(p)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for range 2 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			f.fill(k)
			f.fill(e)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	default:
		panic(fmt.Sprintf("recordtest.Filler: no rule for %s", v.Type()))
	}
}

// InUTC puts every time in v (a pointer, or a slice) in UTC, in place, so
// values compare by instant: records keep instants and offsets, not zone
// names or monotonic readings.
func InUTC(v any) {
	walkTimes(reflect.ValueOf(v))
}

func walkTimes(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkTimes(v.Elem())
		}
	case reflect.Struct:
		if v.Type() == timeType {
			if v.CanSet() {
				v.Set(reflect.ValueOf(v.Interface().(time.Time).UTC()))
			}
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				walkTimes(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walkTimes(v.Index(i))
		}
	}
}
