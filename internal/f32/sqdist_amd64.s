//go:build amd64 && !noasm

#include "textflag.h"

// func sqDistAVX2(a, b []float32) float64
// Σ (a_i − b_i)²: the differences in float32 (VSUBPS), widened to float64,
// squared and added into eight partial sums (lanes 0–3 in Y0, 4–7 in Y1),
// reduced as ((s0+s4)+(s1+s5)) + ((s2+s6)+(s3+s7)), then the tail added
// in order: sqDistGeneric's operations. VEX scalar forms only (see Axpy).
TEXT ·sqDistAVX2(SB), NOSPLIT, $0-56
	MOVQ a_base+0(FP), SI
	MOVQ a_len+8(FP), CX
	MOVQ b_base+24(FP), DI
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	XORQ AX, AX
	MOVQ CX, DX
	ANDQ $-8, DX // elements handled 8 at a time

loop8:
	CMPQ AX, DX
	JGE  reduce
	VMOVUPS (SI)(AX*4), Y2
	VSUBPS  (DI)(AX*4), Y2, Y2 // a − b, float32
	VCVTPS2PD X2, Y3
	VEXTRACTF128 $1, Y2, X4
	VCVTPS2PD X4, Y4
	VMULPD  Y3, Y3, Y3
	VMULPD  Y4, Y4, Y4
	VADDPD  Y3, Y0, Y0
	VADDPD  Y4, Y1, Y1
	ADDQ    $8, AX
	JMP     loop8

reduce:
	VADDPD Y1, Y0, Y0        // s0+s4, s1+s5, s2+s6, s3+s7
	VEXTRACTF128 $1, Y0, X1  // s2+s6, s3+s7
	VHADDPD X0, X0, X0       // (s0+s4) + (s1+s5)
	VHADDPD X1, X1, X1       // (s2+s6) + (s3+s7)
	VADDSD  X1, X0, X0

tail:
	CMPQ AX, CX
	JGE  done
	VMOVSS (SI)(AX*4), X2
	VSUBSS (DI)(AX*4), X2, X2
	VCVTSS2SD X2, X2, X2
	VMULSD X2, X2, X2
	VADDSD X2, X0, X0
	INCQ AX
	JMP  tail

done:
	VMOVSD X0, ret+48(FP)
	VZEROUPPER
	RET
