package config

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/sethvargo/go-envconfig"
)

// Process reads the environment into target (a pointer to a struct with
// env tags) with go-envconfig, after checking every number, duration,
// flag and size that is set, so that a malformed one is refused naming the
// variable, what it holds and a good value, rather than in go-envconfig's
// words. A field's `example` tag gives the good value; else its default.
func Process(ctx context.Context, target any, l envconfig.Lookuper) error {
	t := reflect.TypeOf(target).Elem()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("env"), ",")
		if name == "" {
			continue
		}
		v, ok := l.Lookup(name)
		if !ok || v == "" {
			continue
		}
		if what := malformed(f.Type, v); what != "" {
			return fmt.Errorf("configuration: %s=%q is not %s; for example %s=%s", name, v, what, name, envExample(f, opts))
		}
	}
	if err := envconfig.ProcessWith(ctx, &envconfig.Config{Target: target, Lookuper: l}); err != nil {
		return fmt.Errorf("configuration: %s", envNames(t, err.Error()))
	}
	return nil
}

var (
	durationType = reflect.TypeOf(time.Duration(0))
	byteSizeType = reflect.TypeOf(ByteSize(0))
)

// malformed says what v should be for a field of type t ("a duration with
// a unit"), or "" when v reads as one.
func malformed(t reflect.Type, v string) string {
	v = strings.TrimSpace(v)
	switch t {
	case durationType:
		return unless(isDuration(v), "a duration with a unit (s, m or h)")
	case byteSizeType:
		var b ByteSize
		return unless(b.UnmarshalText([]byte(v)) == nil, "a size above zero (bytes, or a number with KiB, MiB, GiB, KB, MB or GB)")
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		_, err := strconv.ParseInt(v, 10, 64)
		return unless(err == nil, "a whole number")
	case reflect.Float64:
		_, err := strconv.ParseFloat(v, 64)
		return unless(err == nil, "a number written with a decimal point")
	case reflect.Bool:
		_, err := strconv.ParseBool(v)
		return unless(err == nil, "true or false")
	}
	return ""
}

func isDuration(v string) bool {
	_, err := time.ParseDuration(v)
	return err == nil
}

// unless is what when ok is false, else "".
func unless(ok bool, what string) string {
	if ok {
		return ""
	}
	return what
}

// envExample is a good value for field f: its example tag, else its
// default, else one for its type.
func envExample(f reflect.StructField, opts string) string {
	if ex := f.Tag.Get("example"); ex != "" {
		return ex
	}
	for _, o := range strings.Split(opts, ",") {
		if d, ok := strings.CutPrefix(strings.TrimSpace(o), "default="); ok && d != "" {
			return d
		}
	}
	switch {
	case f.Type == durationType:
		return "30m"
	case f.Type == byteSizeType:
		return "1MiB"
	case f.Type.Kind() == reflect.Float64:
		return "5.00"
	case f.Type.Kind() == reflect.Bool:
		return "true"
	}
	return "4"
}

// envNames replaces the Go field names go-envconfig puts in its errors with
// the variables people actually set.
func envNames(t reflect.Type, msg string) string {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("env"), ",")
		msg = strings.ReplaceAll(msg, f.Name+":", name+":")
	}
	return msg
}
