#include <cstdio>
#include <vector>
int main(){int n;scanf("%d",&n);std::vector<long long> v(64<<20);for(size_t i=0;i<v.size();i+=512)v[i]=i;long long s=0,x;for(int i=0;i<n;i++){scanf("%lld",&x);s+=x;}printf("%lld\n",s+v[n%8]*0);}
