#ifndef HEADER
#define HEADER
/*
 * This program should fail with a COMPILER-ERROR due to a timeout.
 *
 * The program recursively includes itself via the preprocessor
 * directive '#include __FILE__' about 2^26 times (or more, I didn't
 * do a careful analysis).
 *
 * This program is valid ANSI C and should in principle compile in a
 * very, very long time without any errors or warnings.
 *
 * @EXPECTED_RESULTS@: COMPILER-ERROR
 */
#endif
#ifndef A1
#define A1
#else
#ifndef B1
#define B1
#else
#ifndef C1
#define C1
#else
#ifndef D1
#define D1
#else
#ifndef E1
#define E1
#else
#ifndef F1
#define F1
#else
#ifndef G1
#define G1
#else
#ifndef H1
#define H1
#else
#ifndef I1
#define I1
#else
#ifndef J1
#define J1
#else
#ifndef K1
#define K1
#else
#ifndef L1
#define L1
#else
#ifndef M1
#define M1
#else
#ifndef N1
#define N1
#else
#ifndef O1
#define O1
#else
#ifndef P1
#define P1
#else
#ifndef Q1
#define Q1
#else
#ifndef R1
#define R1
#else
#ifndef S1
#define S1
#else
#ifndef T1
#define T1
#else
#ifndef U1
#define U1
#else
#ifndef V1
#define V1
#else
#ifndef W1
#define W1
#else
#ifndef X1
#define X1
#else
#ifndef Y1
#define Y1
#else
#ifndef Z1
#define Z1
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#if defined(A1) && defined(B1) && defined(C1) && defined(D1) && defined(E1) && defined(F1) && defined(G1) && defined(H1) && defined(I1) && defined(J1) && defined(K1) && defined(L1) && defined(M1) && defined(N1) && defined(O1) && defined(P1) && defined(Q1) && defined(R1) && defined(S1) && defined(T1) && defined(U1) && defined(V1) && defined(W1) && defined(X1) && defined(Y1) && defined(Z1)
#else
#include __FILE__
#endif
#ifdef Z1
#undef Z1
#else
#ifdef Y1
#undef Y1
#else
#ifdef X1
#undef X1
#else
#ifdef W1
#undef W1
#else
#ifdef V1
#undef V1
#else
#ifdef U1
#undef U1
#else
#ifdef T1
#undef T1
#else
#ifdef S1
#undef S1
#else
#ifdef R1
#undef R1
#else
#ifdef Q1
#undef Q1
#else
#ifdef P1
#undef P1
#else
#ifdef O1
#undef O1
#else
#ifdef N1
#undef N1
#else
#ifdef M1
#undef M1
#else
#ifdef L1
#undef L1
#else
#ifdef K1
#undef K1
#else
#ifdef J1
#undef J1
#else
#ifdef I1
#undef I1
#else
#ifdef H1
#undef H1
#else
#ifdef G1
#undef G1
#else
#ifdef F1
#undef F1
#else
#ifdef E1
#undef E1
#else
#ifdef D1
#undef D1
#else
#ifdef C1
#undef C1
#else
#ifdef B1
#undef B1
#else
#ifdef A1
#undef A1
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#ifndef A2
#define A2
#else
#ifndef B2
#define B2
#else
#ifndef C2
#define C2
#else
#ifndef D2
#define D2
#else
#ifndef E2
#define E2
#else
#ifndef F2
#define F2
#else
#ifndef G2
#define G2
#else
#ifndef H2
#define H2
#else
#ifndef I2
#define I2
#else
#ifndef J2
#define J2
#else
#ifndef K2
#define K2
#else
#ifndef L2
#define L2
#else
#ifndef M2
#define M2
#else
#ifndef N2
#define N2
#else
#ifndef O2
#define O2
#else
#ifndef P2
#define P2
#else
#ifndef Q2
#define Q2
#else
#ifndef R2
#define R2
#else
#ifndef S2
#define S2
#else
#ifndef T2
#define T2
#else
#ifndef U2
#define U2
#else
#ifndef V2
#define V2
#else
#ifndef W2
#define W2
#else
#ifndef X2
#define X2
#else
#ifndef Y2
#define Y2
#else
#ifndef Z2
#define Z2
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#if defined(A2) && defined(B2) && defined(C2) && defined(D2) && defined(E2) && defined(F2) && defined(G2) && defined(H2) && defined(I2) && defined(J2) && defined(K2) && defined(L2) && defined(M2) && defined(N2) && defined(O2) && defined(P2) && defined(Q2) && defined(R2) && defined(S2) && defined(T2) && defined(U2) && defined(V2) && defined(W2) && defined(X2) && defined(Y2) && defined(Z2)
#else
#include __FILE__
#endif
#ifdef Z2
#undef Z2
#else
#ifdef Y2
#undef Y2
#else
#ifdef X2
#undef X2
#else
#ifdef W2
#undef W2
#else
#ifdef V2
#undef V2
#else
#ifdef U2
#undef U2
#else
#ifdef T2
#undef T2
#else
#ifdef S2
#undef S2
#else
#ifdef R2
#undef R2
#else
#ifdef Q2
#undef Q2
#else
#ifdef P2
#undef P2
#else
#ifdef O2
#undef O2
#else
#ifdef N2
#undef N2
#else
#ifdef M2
#undef M2
#else
#ifdef L2
#undef L2
#else
#ifdef K2
#undef K2
#else
#ifdef J2
#undef J2
#else
#ifdef I2
#undef I2
#else
#ifdef H2
#undef H2
#else
#ifdef G2
#undef G2
#else
#ifdef F2
#undef F2
#else
#ifdef E2
#undef E2
#else
#ifdef D2
#undef D2
#else
#ifdef C2
#undef C2
#else
#ifdef B2
#undef B2
#else
#ifdef A2
#undef A2
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#endif
#ifndef MAIN
#define MAIN
int main()
{
	return 0;
}
#endif
