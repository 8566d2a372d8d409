// A probe for BENCHMARKS.md ("Hits' rows from the scratch files"): `burst CPU SECONDS SLICE_NS`.
// ~2 ms bursts of work with 0.5 ms sleeps between, pinned to CPU, with an EEVDF slice
// request (0: the default); prints the bursts' p50/p99/p999/max. Run beside `slicehog`.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <unistd.h>
#include <sched.h>
#include <time.h>
#include <sys/syscall.h>
struct attr { uint32_t size, policy; uint64_t flags; int32_t nice; uint32_t prio; uint64_t runtime, deadline, period; };
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int c,char**v){cpu_set_t s;CPU_ZERO(&s);CPU_SET(atoi(v[1]),&s);sched_setaffinity(0,sizeof s,&s);
 struct attr a; memset(&a,0,sizeof a); a.size=sizeof a; a.runtime=strtoull(v[3],0,10);
 if(a.runtime && syscall(SYS_sched_setattr,0,&a,0)) perror("setattr");
 volatile unsigned x=1; double t=now(); for(long k=0;k<200000000;k++) x=x*1664525u+1013904223u; double per=(now()-t)/200000000;
 long iters=(long)(0.002/per); static double d[100000]; int n=0; double t0=now();
 while(now()-t0<atof(v[2]) && n<100000){ double b=now(); for(long k=0;k<iters;k++) x=x*1664525u+1013904223u; d[n++]=now()-b; usleep(500);}
 qsort(d,n,sizeof(double),cmp);
 printf("slice %-10s bursts %d p50 %.2f p99 %.2f p999 %.2f max %.2f ms\n",v[3],n,d[n/2]*1e3,d[n*99/100]*1e3,d[n*999/1000]*1e3,d[n-1]*1e3);return 0;}
