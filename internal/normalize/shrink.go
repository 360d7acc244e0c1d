package normalize

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/agentwire/agentwire/pkg/canonical"
)

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// shrink makes an event's payload fit in roughly limit bytes, for events
// that are too large for a message even with their raw frame referenced (a
// 5 MB assistant message carries its text twice: as content and in the
// provider's item). It first drops optional provider copies (json.RawMessage
// members), then cuts the longest strings, marking each cut. Nothing is
// lost for good: the whole frame stays in RAW, referenced by the event.
func shrink(e canonical.Event, limit int) canonical.Event {
	p := reflect.ValueOf(e.Payload)
	if p.Kind() != reflect.Pointer || p.IsNil() {
		return e
	}
	clone := reflect.New(p.Elem().Type())
	clone.Elem().Set(p.Elem())
	v := clone.Elem()
	budget := max(limit/4, 1024)
	for sf, f := range v.Fields() {
		if f.Type() == rawMessageType && f.Len() > 0 && isOptional(sf) {
			f.Set(reflect.Zero(rawMessageType))
		}
		cutStrings(f, budget)
	}
	e.Payload = clone.Interface().(canonical.Payload)
	return e
}

func isOptional(f reflect.StructField) bool {
	tag := f.Tag.Get("json")
	for i := range len(tag) {
		if tag[i] == ',' {
			return true // omitempty or omitzero
		}
	}
	return false
}

// cutStrings cuts every string longer than budget bytes in v (strings,
// string maps), keeping valid UTF-8.
func cutStrings(v reflect.Value, budget int) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() && v.Len() > budget {
			v.SetString(cut(v.String(), budget))
		}
	case reflect.Map:
		if v.Type().Elem().Kind() != reflect.String || v.IsNil() {
			return
		}
		m := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			s := it.Value().String()
			if len(s) > budget {
				s = cut(s, budget)
			}
			m.SetMapIndex(it.Key(), reflect.ValueOf(s).Convert(v.Type().Elem()))
		}
		v.Set(m)
	default:
	}
}

func cut(s string, n int) string {
	i := n
	for i > 0 && i < len(s) && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + fmt.Sprintf("…[truncated by agentwire: %d bytes; the whole frame is in RAW]", len(s))
}
