//go:build amd64 && !noasm

#include "textflag.h"

// func spDot4AVX2(n int, val *float64, ind *int32, x *float64, out *[4]float64)
// out[k] = Σ_{p even} val[p]·x[4·ind[p]+k] + Σ_{p odd} val[p]·x[4·ind[p]+k]
// for p < n: two accumulators (even and odd p), each summed in order of p,
// each term rounded as a product then a sum (VMULPD, VADDPD), the two
// added at the end, like spDot4Go.
TEXT ·spDot4AVX2(SB), NOSPLIT, $0-40
	MOVQ n+0(FP), CX
	MOVQ val+8(FP), SI
	MOVQ ind+16(FP), DI
	MOVQ x+24(FP), DX
	MOVQ out+32(FP), R8
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	MOVQ CX, BX
	ANDQ $-2, BX
	XORQ AX, AX

sploop:
	CMPQ AX, BX
	JGE  sptail
	MOVLQSX (DI)(AX*4), R9
	SHLQ    $5, R9
	VBROADCASTSD (SI)(AX*8), Y2
	VMULPD  (DX)(R9*1), Y2, Y2
	VADDPD  Y2, Y0, Y0
	MOVLQSX 4(DI)(AX*4), R10
	SHLQ    $5, R10
	VBROADCASTSD 8(SI)(AX*8), Y3
	VMULPD  (DX)(R10*1), Y3, Y3
	VADDPD  Y3, Y1, Y1
	ADDQ    $2, AX
	JMP     sploop

sptail:
	CMPQ AX, CX
	JGE  spdone
	MOVLQSX (DI)(AX*4), R9
	SHLQ    $5, R9
	VBROADCASTSD (SI)(AX*8), Y2
	VMULPD  (DX)(R9*1), Y2, Y2
	VADDPD  Y2, Y0, Y0

spdone:
	VADDPD  Y1, Y0, Y0
	VMOVUPD Y0, (R8)
	VZEROUPPER
	RET
