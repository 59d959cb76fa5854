// Package clientaddr tells which address a request came from when proxies
// stand in front of the lab, so that per-address limits count the visitor,
// not the proxy, and a visitor cannot choose the address counted.
//
// Proxies that set X-Forwarded-For append the address they received the
// request from (nginx's $proxy_add_x_forwarded_for, AWS ALB, Envoy's
// use_remote_address): whatever the client wrote itself stands to the
// left. So the client is the right-most entry that no trusted proxy
// added, and the header counts only when the peer itself is trusted.
// Taking the first entry, as the lab once did, let any visitor pick their
// own address by sending the header.
package clientaddr

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Proxies is the set of proxies whose forwarding headers are believed. The
// zero value trusts none: the peer is the client and X-Forwarded-* are
// ignored.
type Proxies struct {
	// Peer trusts the direct peer, whatever its address (one proxy in
	// front, the -trust-forwarded flag).
	Peer bool
	// Nets are the trusted proxies' addresses (-trusted-proxies).
	Nets []netip.Prefix
}

// Parse reads a comma-separated list of addresses and CIDR prefixes
// ("10.0.0.0/8,127.0.0.1"). An empty list trusts none.
func Parse(list string) ([]netip.Prefix, error) {
	var nets []netip.Prefix
	var errs []error
	for part := range strings.SplitSeq(list, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if p, err := netip.ParsePrefix(part); err == nil {
			nets = append(nets, p.Masked())
			continue
		}
		if a, err := netip.ParseAddr(part); err == nil {
			nets = append(nets, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		errs = append(errs, fmt.Errorf("%q is not an address or CIDR prefix (allowed like 10.0.0.0/8 or 127.0.0.1)", trunc(part, 50)))
	}
	return nets, errors.Join(errs...)
}

// Active reports whether any forwarding header is believed.
func (p Proxies) Active() bool { return p.Peer || len(p.Nets) > 0 }

func (p Proxies) trusts(addr string) bool {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, n := range p.Nets {
		if n.Contains(a) {
			return true
		}
	}
	return false
}

// peer is the request's direct peer, without its port.
func peer(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// viaProxy reports whether the request's peer is a trusted proxy, so its
// forwarding headers are believed.
func (p Proxies) viaProxy(r *http.Request) bool {
	return p.Peer || p.trusts(peer(r))
}

// Client is the address the request's limits count against: the peer; or,
// when the peer is a trusted proxy, the right-most X-Forwarded-For entry
// that is not a trusted proxy (every header line, in order, as one list).
// If every entry is trusted, the left-most is the client.
func (p Proxies) Client(r *http.Request) string {
	if !p.viaProxy(r) {
		return peer(r)
	}
	var hops []string
	for _, line := range r.Header.Values("X-Forwarded-For") {
		for h := range strings.SplitSeq(line, ",") {
			if h = strings.TrimSpace(h); h != "" {
				hops = append(hops, h)
			}
		}
	}
	if len(hops) == 0 {
		return peer(r)
	}
	for i := len(hops) - 1; i > 0; i-- {
		if !p.trusts(hops[i]) {
			return trunc(hops[i], 64)
		}
	}
	return trunc(hops[0], 64)
}

// Secure reports whether the browser reached the lab over https: directly,
// or through a trusted proxy that says so (X-Forwarded-Proto).
func (p Proxies) Secure(r *http.Request) bool {
	return r.TLS != nil || p.viaProxy(r) && r.Header.Get("X-Forwarded-Proto") == "https"
}

// Host is the lab's host as the browser sees it: X-Forwarded-Host from a
// trusted proxy, else the request's.
func (p Proxies) Host(r *http.Request) string {
	if p.viaProxy(r) {
		if h := r.Header.Get("X-Forwarded-Host"); h != "" {
			return h
		}
	}
	return r.Host
}

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
