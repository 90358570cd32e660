//go:build amd64 && !noasm

#include "textflag.h"

// func wsqAccAVX2(n int, w, a, b *float64, acc *[16]float64)
// acc[k mod 16] += (w[k]·d)·d, d = a[k] − b[k], for the first n − n mod 16
// entries, then acc[k mod 4] for the rest (n a multiple of 4): VSUBPD,
// VMULPD, VMULPD, VADDPD, the roundings of wsqAccGeneric.
TEXT ·wsqAccAVX2(SB), NOSPLIT, $0-40
	MOVQ n+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), R8
	MOVQ b+24(FP), R9
	MOVQ acc+32(FP), DI
	VMOVUPD 0(DI), Y0
	VMOVUPD 32(DI), Y1
	VMOVUPD 64(DI), Y2
	VMOVUPD 96(DI), Y3
	XORQ AX, AX
	MOVQ CX, DX
	ANDQ $-16, DX
	JZ   wfour

wloop16:
	VMOVUPD 0(R8)(AX*8), Y4
	VSUBPD 0(R9)(AX*8), Y4, Y4
	VMULPD 0(SI)(AX*8), Y4, Y5
	VMULPD Y4, Y5, Y5
	VADDPD Y5, Y0, Y0
	VMOVUPD 32(R8)(AX*8), Y6
	VSUBPD 32(R9)(AX*8), Y6, Y6
	VMULPD 32(SI)(AX*8), Y6, Y7
	VMULPD Y6, Y7, Y7
	VADDPD Y7, Y1, Y1
	VMOVUPD 64(R8)(AX*8), Y8
	VSUBPD 64(R9)(AX*8), Y8, Y8
	VMULPD 64(SI)(AX*8), Y8, Y9
	VMULPD Y8, Y9, Y9
	VADDPD Y9, Y2, Y2
	VMOVUPD 96(R8)(AX*8), Y10
	VSUBPD 96(R9)(AX*8), Y10, Y10
	VMULPD 96(SI)(AX*8), Y10, Y11
	VMULPD Y10, Y11, Y11
	VADDPD Y11, Y3, Y3
	ADDQ $16, AX
	CMPQ AX, DX
	JLT  wloop16

wfour:
	CMPQ AX, CX
	JGE  wdone

wloop4:
	VMOVUPD 0(R8)(AX*8), Y4
	VSUBPD 0(R9)(AX*8), Y4, Y4
	VMULPD 0(SI)(AX*8), Y4, Y5
	VMULPD Y4, Y5, Y5
	VADDPD Y5, Y0, Y0
	ADDQ $4, AX
	CMPQ AX, CX
	JLT  wloop4

wdone:
	VMOVUPD Y0, 0(DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	VZEROUPPER
	RET

// func addScaledSqAVX2(n int, s float64, acc, a, b *float64)
// acc[k] += (s·d)·d, d = a[k] − b[k], for the first n entries (a multiple
// of 4): VSUBPD, VMULPD, VMULPD, VADDPD, the roundings of the Go loop.
TEXT ·addScaledSqAVX2(SB), NOSPLIT, $0-40
	MOVQ n+0(FP), CX
	VBROADCASTSD s+8(FP), Y15
	MOVQ acc+16(FP), DI
	MOVQ a+24(FP), R8
	MOVQ b+32(FP), R9
	XORQ AX, AX
	MOVQ CX, DX
	ANDQ $-16, DX
	JZ   afour

aloop16:
	VMOVUPD 0(R8)(AX*8), Y0
	VSUBPD 0(R9)(AX*8), Y0, Y0
	VMULPD Y15, Y0, Y1
	VMULPD Y0, Y1, Y1
	VADDPD 0(DI)(AX*8), Y1, Y1
	VMOVUPD Y1, 0(DI)(AX*8)
	VMOVUPD 32(R8)(AX*8), Y2
	VSUBPD 32(R9)(AX*8), Y2, Y2
	VMULPD Y15, Y2, Y3
	VMULPD Y2, Y3, Y3
	VADDPD 32(DI)(AX*8), Y3, Y3
	VMOVUPD Y3, 32(DI)(AX*8)
	VMOVUPD 64(R8)(AX*8), Y4
	VSUBPD 64(R9)(AX*8), Y4, Y4
	VMULPD Y15, Y4, Y5
	VMULPD Y4, Y5, Y5
	VADDPD 64(DI)(AX*8), Y5, Y5
	VMOVUPD Y5, 64(DI)(AX*8)
	VMOVUPD 96(R8)(AX*8), Y6
	VSUBPD 96(R9)(AX*8), Y6, Y6
	VMULPD Y15, Y6, Y7
	VMULPD Y6, Y7, Y7
	VADDPD 96(DI)(AX*8), Y7, Y7
	VMOVUPD Y7, 96(DI)(AX*8)
	ADDQ $16, AX
	CMPQ AX, DX
	JLT  aloop16

afour:
	CMPQ AX, CX
	JGE  adone

aloop4:
	VMOVUPD 0(R8)(AX*8), Y0
	VSUBPD 0(R9)(AX*8), Y0, Y0
	VMULPD Y15, Y0, Y1
	VMULPD Y0, Y1, Y1
	VADDPD 0(DI)(AX*8), Y1, Y1
	VMOVUPD Y1, 0(DI)(AX*8)
	ADDQ $4, AX
	CMPQ AX, CX
	JLT  aloop4

adone:
	VZEROUPPER
	RET
