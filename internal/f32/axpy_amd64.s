//go:build amd64 && !noasm

#include "textflag.h"

// func axpyAVX2(alpha float32, x, y []float32)
// y[i] = y[i] + alpha*x[i]: VMULPS then VADDPS, the same two roundings as
// the portable loop.
TEXT ·axpyAVX2(SB), NOSPLIT, $0-56
	VBROADCASTSS alpha+0(FP), Y0
	MOVQ x_base+8(FP), SI
	MOVQ x_len+16(FP), CX
	MOVQ y_base+32(FP), DI
	XORQ AX, AX
	MOVQ CX, DX
	ANDQ $-32, DX // elements handled 32 at a time
	JZ   eight

loop32:
	VMULPS (SI)(AX*4), Y0, Y1
	VMULPS 32(SI)(AX*4), Y0, Y2
	VMULPS 64(SI)(AX*4), Y0, Y3
	VMULPS 96(SI)(AX*4), Y0, Y4
	VADDPS (DI)(AX*4), Y1, Y1
	VADDPS 32(DI)(AX*4), Y2, Y2
	VADDPS 64(DI)(AX*4), Y3, Y3
	VADDPS 96(DI)(AX*4), Y4, Y4
	VMOVUPS Y1, (DI)(AX*4)
	VMOVUPS Y2, 32(DI)(AX*4)
	VMOVUPS Y3, 64(DI)(AX*4)
	VMOVUPS Y4, 96(DI)(AX*4)
	ADDQ $32, AX
	CMPQ AX, DX
	JLT  loop32

eight:
	MOVQ CX, DX
	ANDQ $-8, DX
	CMPQ AX, DX
	JGE  tail

loop8:
	VMULPS (SI)(AX*4), Y0, Y1
	VADDPS (DI)(AX*4), Y1, Y1
	VMOVUPS Y1, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, DX
	JLT  loop8

tail:
	CMPQ AX, CX
	JGE  done

	// VEX-encoded scalar instructions (see f64's Axpy): legacy SSE ones
	// after 256-bit VEX ones, with the upper halves of the Y registers
	// dirty, pay a state-transition penalty on many processors.
loop1:
	VMOVSS (SI)(AX*4), X1
	VMULSS X0, X1, X1
	VADDSS (DI)(AX*4), X1, X1
	VMOVSS X1, (DI)(AX*4)
	INCQ AX
	CMPQ AX, CX
	JLT  loop1

done:
	VZEROUPPER
	RET
