// A probe for BENCHMARKS.md ("Hits' rows from the scratch files"): `hiccup CPU SECONDS`.
// A busy loop pinned to CPU; counts the gaps over 200 us in its clock reads (time another
// thread took the CPU). Run beside `slicehog idle 0 0 SECONDS` pinned to the same CPU.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int c,char**v){cpu_set_t s;CPU_ZERO(&s);CPU_SET(atoi(v[1]),&s);sched_setaffinity(0,sizeof s,&s);
 double secs=atof(v[2]),t0=now(),last=t0,tot=0,mx=0;int n=0;
 while(1){double t=now();double g=t-last;if(g>200e-6){n++;tot+=g;if(g>mx)mx=g;}last=t;if(t-t0>secs)break;}
 printf("cpu%s gaps>200us: %d, total %.1f ms, max %.0f us\n",v[1],n,tot*1e3,mx*1e6);return 0;}
