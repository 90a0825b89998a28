#include <iostream>
int main(){long long a,b;std::cin>>a>>b;volatile long x=0;for(;;)x++;}
