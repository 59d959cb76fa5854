package clientaddr

import (
	"crypto/tls"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestClient(t *testing.T) {
	nginx, err := Parse("127.0.0.1, 10.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		proxies Proxies
		peer    string
		xff     []string // header lines
		want    string
	}{
		{"no proxies: the peer, the header ignored", Proxies{}, "203.0.113.9:5000", []string{"1.2.3.4"}, "203.0.113.9"},
		{"nginx appends: a forged first entry is not the client", Proxies{Nets: nginx}, "127.0.0.1:41000", []string{"6.6.6.6, 198.51.100.7"}, "198.51.100.7"},
		{"nginx, no forgery", Proxies{Nets: nginx}, "127.0.0.1:41000", []string{"198.51.100.7"}, "198.51.100.7"},
		{"two proxies: ALB then nginx", Proxies{Nets: nginx}, "127.0.0.1:41000", []string{"6.6.6.6, 198.51.100.7, 10.1.2.3"}, "198.51.100.7"},
		{"one header line per hop", Proxies{Nets: nginx}, "127.0.0.1:41000", []string{"6.6.6.6", "198.51.100.7", "10.1.2.3"}, "198.51.100.7"},
		{"peer not trusted: its header is not believed", Proxies{Nets: nginx}, "198.51.100.7:5000", []string{"6.6.6.6"}, "198.51.100.7"},
		{"trusted peer, no header: the peer", Proxies{Nets: nginx}, "127.0.0.1:41000", nil, "127.0.0.1"},
		{"every hop trusted: the left-most", Proxies{Nets: nginx}, "127.0.0.1:41000", []string{"10.9.9.9, 10.1.1.1"}, "10.9.9.9"},
		{"-trust-forwarded: the right-most entry", Proxies{Peer: true}, "192.0.2.1:80", []string{"6.6.6.6, 198.51.100.7"}, "198.51.100.7"},
		{"IPv6 and a mapped IPv4 proxy", Proxies{Nets: nginx}, "[::ffff:127.0.0.1]:41000", []string{"6.6.6.6, 2001:db8::1"}, "2001:db8::1"},
		{"a garbage entry is an address like any other", Proxies{Nets: nginx}, "127.0.0.1:41000", []string{"1.1.1.1, not-an-ip"}, "not-an-ip"},
		{"a huge entry is cut", Proxies{Nets: nginx}, "127.0.0.1:41000", []string{strings.Repeat("a", 5000)}, strings.Repeat("a", 64)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tc.peer
			for _, l := range tc.xff {
				r.Header.Add("X-Forwarded-For", l)
			}
			if got := tc.proxies.Client(r); got != tc.want {
				t.Errorf("Client = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSecureAndHost(t *testing.T) {
	nets, _ := Parse("127.0.0.1")
	p := Proxies{Nets: nets}
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "127.0.0.1:1"
	r.Host = "backend:8080"
	r.Header.Set("X-Forwarded-Proto", "https")
	r.Header.Set("X-Forwarded-Host", "lab.example")
	if !p.Secure(r) || p.Host(r) != "lab.example" {
		t.Errorf("through the proxy: secure %v host %q", p.Secure(r), p.Host(r))
	}
	r.RemoteAddr = "198.51.100.7:1" // the headers from a visitor
	if p.Secure(r) || p.Host(r) != "backend:8080" {
		t.Errorf("from a visitor: secure %v host %q", p.Secure(r), p.Host(r))
	}
	r.TLS = &tls.ConnectionState{}
	if !p.Secure(r) {
		t.Error("TLS is secure")
	}
}

func TestParse(t *testing.T) {
	nets, err := Parse(" 10.0.0.0/8 ,127.0.0.1,,::1, 10.1.2.3/8")
	if err != nil || len(nets) != 4 || nets[3].String() != "10.0.0.0/8" || nets[2].String() != "::1/128" {
		t.Fatalf("Parse = %v, %v", nets, err)
	}
	if _, err := Parse("10.0.0.0/33,nope"); err == nil || !strings.Contains(err.Error(), `"10.0.0.0/33" is not an address`) || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("bad list: %v", err)
	}
	if nets, err := Parse(""); err != nil || len(nets) != 0 {
		t.Errorf("empty: %v %v", nets, err)
	}
}
