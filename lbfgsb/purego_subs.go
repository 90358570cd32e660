package lbfgsb

import "math"

// The subroutines of L-BFGS-B 3.0 (lbfgsb.f, as patched by Debian), ported
// one to one. Indices are 0-based; head, itail and the other pointers into
// the circular S and Y stores are 0-based too. S and Y are n×m column-major
// (column j at ws[j*n:(j+1)*n]); sy, ss, wt are m×m and wn, snd 2m×2m,
// column-major.

// goWork is the workspace of one pure-Go solve (the arrays of setulb).
type goWork struct {
	n, m       int
	x, g, l, u []float64
	nbd        []int

	ws, wy     []float64 // S and Y, n×m
	sy, ss, wt []float64 // m×m
	wn, snd    []float64 // 2m×2m
	z, r, d, t []float64
	xp         []float64
	wa         []float64 // 8m
	index      []int
	iwhere     []int
	indx2      []int

	ls dcsrch

	moving []int // cauchy: variables that move along the projected gradient
}

func newGoWork(st *setup) *goWork {
	n, m := st.n, st.m
	return &goWork{
		n: n, m: m,
		x: append([]float64(nil), st.x0...), g: make([]float64, n),
		l: st.l, u: st.u, nbd: st.nbd,
		ws: make([]float64, n*m), wy: make([]float64, n*m),
		sy: make([]float64, m*m), ss: make([]float64, m*m), wt: make([]float64, m*m),
		wn: make([]float64, 4*m*m), snd: make([]float64, 4*m*m),
		z: make([]float64, n), r: make([]float64, n), d: make([]float64, n), t: make([]float64, n),
		xp: make([]float64, n), wa: make([]float64, 8*m),
		index: make([]int, n), iwhere: make([]int, n), indx2: make([]int, n),
		moving: make([]int, 0, n),
	}
}

// col returns column j of the n×m store a.
func (w *goWork) col(a []float64, j int) []float64 { return a[j*w.n : (j+1)*w.n] }

// active initialises iwhere and projects x onto the feasible set.
func (w *goWork) active() (prjctd, cnstnd, boxed bool) {
	x, l, u, nbd := w.x, w.l, w.u, w.nbd
	for i := range x {
		if nbd[i] > 0 {
			if nbd[i] <= 2 && x[i] <= l[i] {
				if x[i] < l[i] {
					prjctd = true
					x[i] = l[i]
				}
			} else if nbd[i] >= 2 && x[i] >= u[i] {
				if x[i] > u[i] {
					prjctd = true
					x[i] = u[i]
				}
			}
		}
	}
	boxed = true
	for i := range x {
		if nbd[i] != 2 {
			boxed = false
		}
		if nbd[i] == 0 {
			w.iwhere[i] = -1
		} else {
			cnstnd = true
			if nbd[i] == 2 && u[i]-l[i] <= 0 {
				w.iwhere[i] = 3
			} else {
				w.iwhere[i] = 0
			}
		}
	}
	return prjctd, cnstnd, boxed
}

// bmv computes p = M·v for the 2col×2col middle matrix M of the compact
// L-BFGS formula. It returns a nonzero info if a triangular system is singular.
func (w *goWork) bmv(col int, v, p []float64) int {
	if col == 0 {
		return 0
	}
	m, sy, wt := w.m, w.sy, w.wt
	// PART I: solve [ D^(1/2) O ; -L·D^(-1/2) J ] [p1; p2] = [v1; v2].
	p[col] = v[col]
	for i := 1; i < col; i++ {
		i2 := col + i
		sum := 0.0
		for k := 0; k < i; k++ {
			sum += sy[i+k*m] * v[k] / sy[k+k*m]
		}
		p[i2] = v[i2] + sum
	}
	if info := trtrsUpper(wt, 0, m, col, p[col:2*col], true); info != 0 {
		return info
	}
	for i := 0; i < col; i++ {
		p[i] = v[i] / math.Sqrt(sy[i+i*m])
	}
	// PART II: solve [ -D^(1/2) D^(-1/2)·L' ; 0 J' ] [p1; p2] = [p1; p2].
	if info := trtrsUpper(wt, 0, m, col, p[col:2*col], false); info != 0 {
		return info
	}
	for i := 0; i < col; i++ {
		p[i] = -p[i] / math.Sqrt(sy[i+i*m])
	}
	for i := 0; i < col; i++ {
		sum := 0.0
		for k := i + 1; k < col; k++ {
			sum += sy[k+i*m] * p[col+k] / sy[i+i*m]
		}
		p[i] += sum
	}
	return 0
}

// cauchy computes the generalized Cauchy point into z (xcp), returning the
// number of segments explored and info (nonzero if bmv failed). On exit
// wa[2m:4m] holds c = W'(xcp − x).
func (w *goWork) cauchy(theta float64, col, head int, sbgnrm float64) (nseg, info int) {
	n, m := w.n, w.m
	x, l, u, nbd, g := w.x, w.l, w.u, w.nbd, w.g
	iorder, iwhere, t, d, xcp := w.indx2, w.iwhere, w.t, w.d, w.z
	p, c, wbp, v := w.wa[0:2*m], w.wa[2*m:4*m], w.wa[4*m:6*m], w.wa[6*m:8*m]

	if sbgnrm <= 0 {
		copy(xcp, x)
		return 0, 0
	}
	bnded := true
	nfree := n
	nbreak := 0
	ibkmin := 0
	bkmin := 0.0
	col2 := 2 * col
	f1 := 0.0
	for i := 0; i < col2; i++ {
		p[i] = 0
	}
	var tl, tu float64
	moving := w.moving[:0]
	for i := 0; i < n; i++ {
		neggi := -g[i]
		if iwhere[i] != 3 && iwhere[i] != -1 {
			if nbd[i] <= 2 {
				tl = x[i] - l[i]
			}
			if nbd[i] >= 2 {
				tu = u[i] - x[i]
			}
			xlower := nbd[i] <= 2 && tl <= 0
			xupper := nbd[i] >= 2 && tu <= 0
			iwhere[i] = 0
			if xlower {
				if neggi <= 0 {
					iwhere[i] = 1
				}
			} else if xupper {
				if neggi >= 0 {
					iwhere[i] = 2
				}
			} else {
				if math.Abs(neggi) <= 0 {
					iwhere[i] = -3
				}
			}
		}
		if iwhere[i] != 0 && iwhere[i] != -1 {
			d[i] = 0
		} else {
			d[i] = neggi
			f1 -= neggi * neggi
			// p := p − W'e_i·g_i is accumulated below, column by column.
			moving = append(moving, i)
			if nbd[i] <= 2 && nbd[i] != 0 && neggi < 0 {
				// x(i) + d(i) is bounded below: breakpoint.
				iorder[nbreak] = i
				t[nbreak] = tl / (-neggi)
				if nbreak == 0 || t[nbreak] < bkmin {
					bkmin = t[nbreak]
					ibkmin = nbreak
				}
				nbreak++
			} else if nbd[i] >= 2 && neggi > 0 {
				// x(i) + d(i) is bounded above: breakpoint.
				iorder[nbreak] = i
				t[nbreak] = tu / neggi
				if nbreak == 0 || t[nbreak] < bkmin {
					bkmin = t[nbreak]
					ibkmin = nbreak
				}
				nbreak++
			} else {
				// x(i) + d(i) is not bounded.
				nfree--
				iorder[nfree] = i
				if math.Abs(neggi) > 0 {
					bnded = false
				}
			}
		}
	}

	// p = W'd, summed over the moving variables in increasing order as the
	// Fortran loop does (one accumulator per entry, so the loop order
	// across entries does not change the result), a column at a time.
	pointr := head
	for j := 0; j < col; j++ {
		wyc, wsc := w.col(w.wy, pointr), w.col(w.ws, pointr)
		py, ps := p[j], p[col+j]
		for _, i := range moving {
			py += wyc[i] * d[i]
			ps += wsc[i] * d[i]
		}
		p[j], p[col+j] = py, ps
		pointr = (pointr + 1) % m
	}
	w.moving = moving

	if theta != 1 {
		for j := 0; j < col; j++ {
			p[col+j] *= theta
		}
	}
	copy(xcp, x)
	if nbreak == 0 && nfree == n {
		// d is the zero vector: the GCP is x.
		return 0, 0
	}
	for j := 0; j < col2; j++ {
		c[j] = 0
	}
	f2 := -theta * f1
	f2org := f2
	if col > 0 {
		if info := w.bmv(col, p, v); info != 0 {
			return 0, info
		}
		f2 -= dot(v[:col2], p[:col2])
	}
	dtm := -f1 / f2
	tsum := 0.0
	nseg = 1

	if nbreak > 0 {
		nleft := nbreak
		iter := 1
		tj := 0.0
		for {
			// Find the next smallest breakpoint.
			tj0 := tj
			var ibp int
			if iter == 1 {
				tj = bkmin
				ibp = iorder[ibkmin]
			} else {
				if iter == 2 {
					// Replace the used smallest breakpoint by the last
					// one before building the heap.
					if ibkmin != nbreak-1 {
						t[ibkmin] = t[nbreak-1]
						iorder[ibkmin] = iorder[nbreak-1]
					}
				}
				hpsolb(nleft, t, iorder, iter-2)
				tj = t[nleft-1]
				ibp = iorder[nleft-1]
			}
			dt := tj - tj0
			if dtm < dt {
				break // the minimizer is in this interval
			}
			// Fix one variable and zero its component of d.
			tsum += dt
			nleft--
			iter++
			dibp := d[ibp]
			d[ibp] = 0
			var zibp float64
			if dibp > 0 {
				zibp = u[ibp] - x[ibp]
				xcp[ibp] = u[ibp]
				iwhere[ibp] = 2
			} else {
				zibp = l[ibp] - x[ibp]
				xcp[ibp] = l[ibp]
				iwhere[ibp] = 1
			}
			if nleft == 0 && nbreak == n {
				// All n variables are fixed: xcp is the GCP.
				dtm = dt
				if col > 0 {
					axpy(dtm, p[:col2], c[:col2])
				}
				return nseg, 0
			}
			nseg++
			dibp2 := dibp * dibp
			f1 = f1 + dt*f2 + dibp2 - theta*dibp*zibp
			f2 -= theta * dibp2
			if col > 0 {
				axpy(dt, p[:col2], c[:col2])
				pointr := head
				for j := 0; j < col; j++ {
					wbp[j] = w.wy[ibp+pointr*n]
					wbp[col+j] = theta * w.ws[ibp+pointr*n]
					pointr = (pointr + 1) % m
				}
				if info := w.bmv(col, wbp, v); info != 0 {
					return nseg, info
				}
				wmc := dot(c[:col2], v[:col2])
				wmp := dot(p[:col2], v[:col2])
				wmw := dot(wbp[:col2], v[:col2])
				axpy(-dibp, wbp[:col2], p[:col2])
				f1 += dibp * wmc
				f2 = f2 + 2.0*dibp*wmp - dibp2*wmw
			}
			f2 = fmax(epsmch*f2org, f2)
			if nleft > 0 {
				dtm = -f1 / f2
				continue
			} else if bnded {
				f1 = 0
				f2 = 0
				dtm = 0
			} else {
				dtm = -f1 / f2
			}
			break
		}
	}
	if dtm <= 0 {
		dtm = 0
	}
	tsum += dtm
	// Move the free variables and those whose breakpoints were not reached.
	axpy(tsum, d, xcp)
	if col > 0 {
		axpy(dtm, p[:col2], c[:col2])
	}
	return nseg, 0
}

// axpy is BLAS daxpy: y += a·x.
func axpy(a float64, x, y []float64) {
	if a == 0 {
		return
	}
	for i, v := range x {
		y[i] += a * v
	}
}

// hpsolb moves the least of t[0:n] to t[n-1] and keeps t[0:n-1] a heap
// (building it first if iheap == 0); iorder is permuted alongside.
func hpsolb(n int, t []float64, iorder []int, iheap int) {
	if iheap == 0 {
		for k := 2; k <= n; k++ {
			ddum := t[k-1]
			indxin := iorder[k-1]
			i := k
			for i > 1 {
				j := i / 2
				if ddum < t[j-1] {
					t[i-1] = t[j-1]
					iorder[i-1] = iorder[j-1]
					i = j
				} else {
					break
				}
			}
			t[i-1] = ddum
			iorder[i-1] = indxin
		}
	}
	if n > 1 {
		i := 1
		out := t[0]
		indxou := iorder[0]
		ddum := t[n-1]
		indxin := iorder[n-1]
		for {
			j := i + i
			if j <= n-1 {
				if t[j] < t[j-1] {
					j++
				}
				if t[j-1] < ddum {
					t[i-1] = t[j-1]
					iorder[i-1] = iorder[j-1]
					i = j
					continue
				}
			}
			break
		}
		t[i-1] = ddum
		iorder[i-1] = indxin
		t[n-1] = out
		iorder[n-1] = indxou
	}
}

// freev counts the variables entering and leaving the free set (iter > 0)
// and finds the free and active variables at the GCP: index[0:nfree] are
// free, index[nfree:n] active; indx2[0:nenter] entered and indx2[ileave:n]
// left the free set.
func (w *goWork) freev(nfree, iter int, updatd, cnstnd bool) (nfreeOut, nenter, ileave int, wrk bool) {
	n, index, indx2, iwhere := w.n, w.index, w.indx2, w.iwhere
	ileave = n
	if iter > 0 && cnstnd {
		for i := 0; i < nfree; i++ {
			k := index[i]
			if iwhere[k] > 0 {
				ileave--
				indx2[ileave] = k
			}
		}
		for i := nfree; i < n; i++ {
			k := index[i]
			if iwhere[k] <= 0 {
				indx2[nenter] = k
				nenter++
			}
		}
	}
	wrk = ileave < n || nenter > 0 || updatd
	nfreeOut = 0
	iact := n
	for i := 0; i < n; i++ {
		if iwhere[i] <= 0 {
			index[nfreeOut] = i
			nfreeOut++
		} else {
			iact--
			index[iact] = i
		}
	}
	return nfreeOut, nenter, ileave, wrk
}

// formk forms the LEL' factorisation of the indefinite matrix
//
//	K = [-D -Y'ZZ'Y/theta     L_a'-R_z'  ]
//	    [L_a -R_z           theta*S'AA'S ]
//
// in the upper triangle of wn, updating the inner products kept in snd.
// It returns 0, -1 or -2 (failure of the first or second Cholesky factorisation).
func (w *goWork) formk(nsub, nenter, ileave, iupdat int, updatd bool, theta float64, col, head int) int {
	n, m := w.n, w.m
	ind, indx2 := w.index, w.indx2
	ws, wy := w.ws, w.wy
	m2 := 2 * m
	// wn1(i, j) and wn(i, j) with 1-based (i, j) as in the Fortran code.
	wn1 := func(i, j int) *float64 { return &w.snd[(i-1)+(j-1)*m2] }
	wn := func(i, j int) *float64 { return &w.wn[(i-1)+(j-1)*m2] }
	S := func(p int) []float64 { return ws[p*n : (p+1)*n] }
	Y := func(p int) []float64 { return wy[p*n : (p+1)*n] }

	var upcl int
	if updatd {
		if iupdat > m {
			// Shift the old part of WN1.
			for jy := 1; jy <= m-1; jy++ {
				js := m + jy
				cp := func(cnt, si, sj, di, dj int) {
					src := (si - 1) + (sj-1)*m2
					dst := (di - 1) + (dj-1)*m2
					copy(w.snd[dst:dst+cnt], w.snd[src:src+cnt])
				}
				cp(m-jy, jy+1, jy+1, jy, jy)
				cp(m-jy, js+1, js+1, js, js)
				cp(m-1, m+2, jy+1, m+1, jy)
			}
		}
		// Put new rows in blocks (1,1), (2,1) and (2,2).
		iy := col
		is := m + col
		ipntr := (head + col - 1) % m
		jpntr := head
		for jy := 1; jy <= col; jy++ {
			js := m + jy
			Si, Sj, Yi, Yj := S(ipntr), S(jpntr), Y(ipntr), Y(jpntr)
			var temp1, temp2, temp3 float64
			for k := 0; k < nsub; k++ {
				k1 := ind[k]
				temp1 += Yi[k1] * Yj[k1]
			}
			for k := nsub; k < n; k++ {
				k1 := ind[k]
				temp2 += Si[k1] * Sj[k1]
				temp3 += Si[k1] * Yj[k1]
			}
			*wn1(iy, jy) = temp1
			*wn1(is, js) = temp2
			*wn1(is, jy) = temp3
			jpntr = (jpntr + 1) % m
		}
		// Put a new column in block (2,1).
		jy := col
		jpntr = (head + col - 1) % m
		ipntr = head
		for i := 1; i <= col; i++ {
			is := m + i
			Si, Yj := S(ipntr), Y(jpntr)
			temp3 := 0.0
			for k := 0; k < nsub; k++ {
				k1 := ind[k]
				temp3 += Si[k1] * Yj[k1]
			}
			ipntr = (ipntr + 1) % m
			*wn1(is, jy) = temp3
		}
		upcl = col - 1
	} else {
		upcl = col
	}

	// Modify the old parts in blocks (1,1) and (2,2) for the changes in the
	// set of free variables.
	ipntr := head
	for iy := 1; iy <= upcl; iy++ {
		is := m + iy
		jpntr := head
		for jy := 1; jy <= iy; jy++ {
			js := m + jy
			Si, Sj, Yi, Yj := S(ipntr), S(jpntr), Y(ipntr), Y(jpntr)
			var temp1, temp2, temp3, temp4 float64
			for k := 0; k < nenter; k++ {
				k1 := indx2[k]
				temp1 += Yi[k1] * Yj[k1]
				temp2 += Si[k1] * Sj[k1]
			}
			for k := ileave; k < n; k++ {
				k1 := indx2[k]
				temp3 += Yi[k1] * Yj[k1]
				temp4 += Si[k1] * Sj[k1]
			}
			*wn1(iy, jy) = *wn1(iy, jy) + temp1 - temp3
			*wn1(is, js) = *wn1(is, js) - temp2 + temp4
			jpntr = (jpntr + 1) % m
		}
		ipntr = (ipntr + 1) % m
	}
	// Modify the old parts in block (2,1).
	ipntr = head
	for is := m + 1; is <= m+upcl; is++ {
		jpntr := head
		for jy := 1; jy <= upcl; jy++ {
			Si, Yj := S(ipntr), Y(jpntr)
			var temp1, temp3 float64
			for k := 0; k < nenter; k++ {
				k1 := indx2[k]
				temp1 += Si[k1] * Yj[k1]
			}
			for k := ileave; k < n; k++ {
				k1 := indx2[k]
				temp3 += Si[k1] * Yj[k1]
			}
			if is <= jy+m {
				*wn1(is, jy) = *wn1(is, jy) + temp1 - temp3
			} else {
				*wn1(is, jy) = *wn1(is, jy) - temp1 + temp3
			}
			jpntr = (jpntr + 1) % m
		}
		ipntr = (ipntr + 1) % m
	}

	// Form the upper triangle of WN = [D+Y'ZZ'Y/theta   -L_a'+R_z' ]
	//                                  [-L_a +R_z        S'AA'S*theta].
	for iy := 1; iy <= col; iy++ {
		is := col + iy
		is1 := m + iy
		for jy := 1; jy <= iy; jy++ {
			js := col + jy
			js1 := m + jy
			*wn(jy, iy) = *wn1(iy, jy) / theta
			*wn(js, is) = *wn1(is1, js1) * theta
		}
		for jy := 1; jy <= iy-1; jy++ {
			*wn(jy, is) = -*wn1(is1, jy)
		}
		for jy := iy; jy <= col; jy++ {
			*wn(jy, is) = *wn1(is1, jy)
		}
		*wn(iy, iy) = *wn(iy, iy) + w.sy[(iy-1)+(iy-1)*m]
	}

	// Factor the (1,1) block: LL' with L' in the upper triangle of wn.
	if info := potrfUpper(w.wn, 0, m2, col); info != 0 {
		return -1
	}
	// Form L^-1(-L_a'+R_z') in the (1,2) block.
	col2 := 2 * col
	for js := col + 1; js <= col2; js++ {
		off := (js - 1) * m2
		trtrsUpper(w.wn, 0, m2, col, w.wn[off:off+col], true)
	}
	// Form S'AA'S*theta + (L^-1(-L_a'+R_z'))'L^-1(-L_a'+R_z') in the upper
	// triangle of the (2,2) block.
	for is := col + 1; is <= col2; is++ {
		ci := w.wn[(is-1)*m2 : (is-1)*m2+col]
		for js := is; js <= col2; js++ {
			cj := w.wn[(js-1)*m2 : (js-1)*m2+col]
			*wn(is, js) = *wn(is, js) + dot(ci, cj)
		}
	}
	// Cholesky factorisation of the (2,2) block.
	if info := potrfUpper(w.wn, col+col*m2, m2, col); info != 0 {
		return -2
	}
	return 0
}

// formt forms T = theta*SS + L*D^(-1)*L' in the upper triangle of wt and
// factors it as J*J' (J' in the upper triangle). It returns 0 or -3.
func (w *goWork) formt(col int, theta float64) int {
	m, wt, sy, ss := w.m, w.wt, w.sy, w.ss
	for j := 0; j < col; j++ {
		wt[0+j*m] = theta * ss[0+j*m]
	}
	for i := 1; i < col; i++ {
		for j := i; j < col; j++ {
			k1 := i // min(i, j) in 0-based terms
			ddum := 0.0
			for k := 0; k < k1; k++ {
				ddum += sy[i+k*m] * sy[j+k*m] / sy[k+k*m]
			}
			wt[i+j*m] = ddum + theta*ss[i+j*m]
		}
	}
	if potrfUpper(wt, 0, m, col) != 0 {
		return -3
	}
	return 0
}

// cmprlb computes r = -Z'B(xcp - xk) - Z'g using wa[2m:4m] = W'(xcp - x)
// from cauchy. It returns 0 or -8.
func (w *goWork) cmprlb(theta float64, col, head, nfree int, cnstnd bool) int {
	n, m := w.n, w.m
	x, g, z, r, wa := w.x, w.g, w.z, w.r, w.wa
	if !cnstnd && col > 0 {
		for i := 0; i < n; i++ {
			r[i] = -g[i]
		}
		return 0
	}
	for i := 0; i < nfree; i++ {
		k := w.index[i]
		r[i] = -theta*(z[k]-x[k]) - g[k]
	}
	if info := w.bmv(col, wa[2*m:4*m], wa[0:2*m]); info != 0 {
		return -8
	}
	pointr := head
	for j := 0; j < col; j++ {
		a1 := wa[j]
		a2 := theta * wa[col+j]
		wyc, wsc := w.col(w.wy, pointr), w.col(w.ws, pointr)
		for i := 0; i < nfree; i++ {
			k := w.index[i]
			r[i] = r[i] + wyc[k]*a1 + wsc[k]*a2
		}
		pointr = (pointr + 1) % m
	}
	return 0
}

// subsm is the subspace minimisation of L-BFGS-B 3.0 (Morales and Nocedal
// 2011): the Newton direction on the free variables from the Cauchy point z,
// projected onto the box, with a backtrack to the feasible segment when the
// projected step is not a descent direction. d (= r on entry) is the reduced
// gradient. It returns iword (0: inside the box, 1: a bound was hit) and info.
func (w *goWork) subsm(nsub int, theta float64, col, head int) (iword, info int) {
	if nsub <= 0 {
		return 0, 0
	}
	n, m := w.n, w.m
	ind, l, u, nbd := w.index, w.l, w.u, w.nbd
	x, d, xp, xx, gg := w.z, w.r, w.xp, w.x, w.g
	wv := w.wa[0 : 2*m]

	// wv = W'Zd.
	pointr := head
	for i := 0; i < col; i++ {
		wyc, wsc := w.col(w.wy, pointr), w.col(w.ws, pointr)
		var temp1, temp2 float64
		for j := 0; j < nsub; j++ {
			k := ind[j]
			temp1 += wyc[k] * d[j]
			temp2 += wsc[k] * d[j]
		}
		wv[i] = temp1
		wv[col+i] = theta * temp2
		pointr = (pointr + 1) % m
	}
	// wv = K^(-1) wv.
	m2 := 2 * m
	col2 := 2 * col
	if info = trtrsUpper(w.wn, 0, m2, col2, wv[:col2], true); info != 0 {
		return 0, info
	}
	for i := 0; i < col; i++ {
		wv[i] = -wv[i]
	}
	if info = trtrsUpper(w.wn, 0, m2, col2, wv[:col2], false); info != 0 {
		return 0, info
	}
	// d = (1/theta)d + (1/theta²)Z'W wv.
	pointr = head
	for jy := 0; jy < col; jy++ {
		js := col + jy
		wyc, wsc := w.col(w.wy, pointr), w.col(w.ws, pointr)
		for i := 0; i < nsub; i++ {
			k := ind[i]
			d[i] = d[i] + wyc[k]*wv[jy]/theta + wsc[k]*wv[js]
		}
		pointr = (pointr + 1) % m
	}
	s := 1 / theta
	for i := 0; i < nsub; i++ {
		d[i] *= s
	}

	// Project the Newton step onto the box.
	iword = 0
	copy(xp, x)
	for i := 0; i < nsub; i++ {
		k := ind[i]
		dk := d[i]
		xk := x[k]
		if nbd[k] != 0 {
			switch nbd[k] {
			case 1:
				x[k] = fmax(l[k], xk+dk)
				if x[k] == l[k] {
					iword = 1
				}
			case 2:
				xk = fmax(l[k], xk+dk)
				x[k] = fmin(u[k], xk)
				if x[k] == l[k] || x[k] == u[k] {
					iword = 1
				}
			case 3:
				x[k] = fmin(u[k], xk+dk)
				if x[k] == u[k] {
					iword = 1
				}
			}
		} else {
			x[k] = xk + dk
		}
	}
	if iword == 0 {
		return iword, 0
	}
	// Check the sign of the directional derivative of the projected step.
	ddp := 0.0
	for i := 0; i < n; i++ {
		ddp += (x[i] - xx[i]) * gg[i]
	}
	if ddp <= 0 {
		return iword, 0
	}
	// Not a descent direction: backtrack along d to the box instead.
	copy(x, xp)
	alpha := 1.0
	temp1 := alpha
	ibd := -1
	for i := 0; i < nsub; i++ {
		k := ind[i]
		dk := d[i]
		if nbd[k] != 0 {
			if dk < 0 && nbd[k] <= 2 {
				temp2 := l[k] - x[k]
				if temp2 >= 0 {
					temp1 = 0
				} else if dk*alpha < temp2 {
					temp1 = temp2 / dk
				}
			} else if dk > 0 && nbd[k] >= 2 {
				temp2 := u[k] - x[k]
				if temp2 <= 0 {
					temp1 = 0
				} else if dk*alpha > temp2 {
					temp1 = temp2 / dk
				}
			}
			if temp1 < alpha {
				alpha = temp1
				ibd = i
			}
		}
	}
	if alpha < 1 {
		dk := d[ibd]
		k := ind[ibd]
		if dk > 0 {
			x[k] = u[k]
			d[ibd] = 0
		} else if dk < 0 {
			x[k] = l[k]
			d[ibd] = 0
		}
	}
	for i := 0; i < nsub; i++ {
		k := ind[i]
		x[k] += alpha * d[i]
	}
	return iword, 0
}

// matupd stores the new pair (s, y) = (d, r) in the circular S and Y stores
// and updates S'Y and S'S. It returns the new col, head, itail and theta.
func (w *goWork) matupd(itail, iupdat, col, head int, rr, dr, stp, dtd float64) (int, int, int, float64) {
	n, m := w.n, w.m
	if iupdat <= m {
		col = iupdat
		itail = (head + iupdat - 1) % m
	} else {
		itail = (itail + 1) % m
		head = (head + 1) % m
	}
	copy(w.col(w.ws, itail), w.d)
	copy(w.col(w.wy, itail), w.r)
	theta := rr / dr

	ss, sy := w.ss, w.sy
	if iupdat > m {
		// Move the old information.
		for j := 1; j <= col-1; j++ {
			// ss(1:j, j) = ss(2:j+1, j+1); sy(j:col-1, j) = sy(j+1:col, j+1) (1-based).
			copy(ss[(j-1)*m:(j-1)*m+j], ss[1+j*m:1+j*m+j])
			copy(sy[(j-1)+(j-1)*m:(j-1)+(j-1)*m+col-j], sy[j+j*m:j+j*m+col-j])
		}
	}
	// Add the new information: the last row of SY and the last column of SS.
	pointr := head
	c := col - 1
	for j := 0; j < col-1; j++ {
		sy[c+j*m] = dot(w.d, w.col(w.wy, pointr))
		ss[j+c*m] = dot(w.col(w.ws, pointr), w.d)
		pointr = (pointr + 1) % m
	}
	if stp == 1 {
		ss[c+c*m] = dtd
	} else {
		ss[c+c*m] = stp * stp * dtd
	}
	sy[c+c*m] = dr
	_ = n
	return col, head, itail, theta
}
