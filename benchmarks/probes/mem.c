// A probe for BENCHMARKS.md ("Do the two cores slow each other?"): `mem chase SECONDS M`
// follows a random cycle over M Mi entries (ns per access); `mem stream SECONDS M` reads them
// in order (GB/s).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int c,char**v){
  int chase=strcmp(v[1],"chase")==0; double secs=atof(v[2]); size_t n=(size_t)atol(v[3])<<20; // n entries (M)
  unsigned *a=malloc(n*4); for(size_t i=0;i<n;i++)a[i]=i;
  if(chase){ srand(1); for(size_t i=n-1;i>0;i--){size_t j=((size_t)rand()*RAND_MAX+rand())%i; unsigned t=a[i];a[i]=a[j];a[j]=t;} }
  double t0=now(); unsigned long it=0; unsigned idx=0; unsigned long s=0;
  while(now()-t0<secs){ if(chase){for(int k=0;k<100000;k++) idx=a[idx];} else {for(size_t i=0;i<n;i+=16) s+=a[i];} it++; }
  double el=now()-t0;
  if(chase) printf("chase %.1f ns/access\n", el*1e9/(it*100000.0)); else printf("stream %.2f GB/s\n", it*(double)n*4/el/1e9);
  return (int)(s+idx)&1;}
