package checker

import "testing"

// The etcd-lock-analysis case: two holders read-modify-write the set at
// once; the second write drops the first's element, which was
// acknowledged. An element whose add is unknown (info) may be missing.
func TestSetFindsALostAdd(t *testing.T) {
	lost := parse(t,
		`{"process":0,"type":"invoke","f":"add","key":"set","value":"a","time_ns":0}`,
		`{"process":1,"type":"invoke","f":"add","key":"set","value":"b","time_ns":1}`,
		`{"process":0,"type":"ok","f":"add","key":"set","value":"a","time_ns":2}`,
		`{"process":1,"type":"ok","f":"add","key":"set","value":"b","time_ns":3}`,
		`{"process":2,"type":"invoke","f":"add","key":"set","value":"c","time_ns":4}`,
		`{"process":2,"type":"info","f":"add","key":"set","value":"c","time_ns":5}`,
		`{"process":3,"type":"invoke","f":"read-set","key":"set","time_ns":6}`,
		`{"process":3,"type":"ok","f":"read-set","key":"set","value":"b","time_ns":7}`,
	)
	r := Set{}.Check(lost)
	wantVerdict(t, r, Invalid, 3)
	kept := parse(t,
		`{"process":0,"type":"invoke","f":"add","key":"set","value":"a","time_ns":0}`,
		`{"process":0,"type":"ok","f":"add","key":"set","value":"a","time_ns":2}`,
		`{"process":2,"type":"invoke","f":"add","key":"set","value":"c","time_ns":4}`,
		`{"process":2,"type":"info","f":"add","key":"set","value":"c","time_ns":5}`,
		`{"process":3,"type":"invoke","f":"read-set","key":"set","time_ns":6}`,
		`{"process":3,"type":"ok","f":"read-set","key":"set","value":"a c","time_ns":7}`,
	)
	wantVerdict(t, Set{}.Check(kept), Valid, 0)
	phantom := parse(t,
		`{"process":0,"type":"invoke","f":"add","key":"set","value":"a","time_ns":0}`,
		`{"process":0,"type":"ok","f":"add","key":"set","value":"a","time_ns":2}`,
		`{"process":3,"type":"invoke","f":"read-set","key":"set","time_ns":6}`,
		`{"process":3,"type":"ok","f":"read-set","key":"set","value":"a z","time_ns":7}`,
	)
	wantVerdict(t, Set{}.Check(phantom), Invalid, 1)
	noRead := parse(t,
		`{"process":0,"type":"invoke","f":"add","key":"set","value":"a","time_ns":0}`,
		`{"process":0,"type":"ok","f":"add","key":"set","value":"a","time_ns":2}`,
	)
	wantVerdict(t, Set{}.Check(noRead), Unknown, 0)
}
