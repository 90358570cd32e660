//go:build amd64 && !noasm

#include "textflag.h"

// func axpyAVX2(alpha float64, x, y []float64)
// y[i] = y[i] + alpha*x[i]: VMULPD then VADDPD, the same two roundings as
// the portable loop.
TEXT ·axpyAVX2(SB), NOSPLIT, $0-56
	VBROADCASTSD alpha+0(FP), Y0
	MOVQ x_base+8(FP), SI
	MOVQ x_len+16(FP), CX
	MOVQ y_base+32(FP), DI
	XORQ AX, AX
	MOVQ CX, DX
	ANDQ $-16, DX // elements handled 16 at a time
	JZ   four

loop16:
	VMULPD (SI)(AX*8), Y0, Y1
	VMULPD 32(SI)(AX*8), Y0, Y2
	VMULPD 64(SI)(AX*8), Y0, Y3
	VMULPD 96(SI)(AX*8), Y0, Y4
	VADDPD (DI)(AX*8), Y1, Y1
	VADDPD 32(DI)(AX*8), Y2, Y2
	VADDPD 64(DI)(AX*8), Y3, Y3
	VADDPD 96(DI)(AX*8), Y4, Y4
	VMOVUPD Y1, (DI)(AX*8)
	VMOVUPD Y2, 32(DI)(AX*8)
	VMOVUPD Y3, 64(DI)(AX*8)
	VMOVUPD Y4, 96(DI)(AX*8)
	ADDQ $16, AX
	CMPQ AX, DX
	JLT  loop16

four:
	MOVQ CX, DX
	ANDQ $-4, DX
	CMPQ AX, DX
	JGE  tail

loop4:
	VMULPD (SI)(AX*8), Y0, Y1
	VADDPD (DI)(AX*8), Y1, Y1
	VMOVUPD Y1, (DI)(AX*8)
	ADDQ $4, AX
	CMPQ AX, DX
	JLT  loop4

tail:
	CMPQ AX, CX
	JGE  done

	// VEX-encoded scalar instructions: legacy SSE ones (MOVSD, MULSD, …)
	// after 256-bit VEX ones, with the upper halves of the Y registers
	// dirty, pay a state-transition penalty on many processors, which
	// made a 13-element Axpy ten times slower than the Go loop.
loop1:
	VMOVSD (SI)(AX*8), X1
	VMULSD X0, X1, X1
	VADDSD (DI)(AX*8), X1, X1
	VMOVSD X1, (DI)(AX*8)
	INCQ AX
	CMPQ AX, CX
	JLT  loop1

done:
	VZEROUPPER
	RET
