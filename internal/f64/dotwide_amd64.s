//go:build amd64 && !noasm

#include "textflag.h"

// func dotWideAVX2(n int, a, b *float64, c *[4]float64)
// DotWide's loop over the first n entries (n a multiple of 4): Y0–Y3 hold
// the sixteen partial sums, VMULPD then VADDPD as in the portable loop,
// combined as (Y0 + Y1) + (Y2 + Y3).
TEXT ·dotWideAVX2(SB), NOSPLIT, $0-32
	MOVQ n+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ c+24(FP), R8
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	XORQ AX, AX
	MOVQ CX, DX
	ANDQ $-16, DX
	JZ   four

loop16:
	VMOVUPD (SI)(AX*8), Y4
	VMOVUPD 32(SI)(AX*8), Y5
	VMOVUPD 64(SI)(AX*8), Y6
	VMOVUPD 96(SI)(AX*8), Y7
	VMULPD (DI)(AX*8), Y4, Y4
	VMULPD 32(DI)(AX*8), Y5, Y5
	VMULPD 64(DI)(AX*8), Y6, Y6
	VMULPD 96(DI)(AX*8), Y7, Y7
	VADDPD Y4, Y0, Y0
	VADDPD Y5, Y1, Y1
	VADDPD Y6, Y2, Y2
	VADDPD Y7, Y3, Y3
	ADDQ $16, AX
	CMPQ AX, DX
	JLT  loop16

four:
	CMPQ AX, CX
	JGE  combine

loop4:
	VMOVUPD (SI)(AX*8), Y4
	VMULPD (DI)(AX*8), Y4, Y4
	VADDPD Y4, Y0, Y0
	ADDQ $4, AX
	CMPQ AX, CX
	JLT  loop4

combine:
	VADDPD Y1, Y0, Y0
	VADDPD Y3, Y2, Y2
	VADDPD Y2, Y0, Y0
	VMOVUPD Y0, (R8)
	VZEROUPPER
	RET
