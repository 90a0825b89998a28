#include <cstdio>
#include <cmath>
int main(){double r;scanf("%lf",&r);printf("%.9f\n",M_PI*r*r);}
