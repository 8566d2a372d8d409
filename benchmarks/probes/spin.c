// A probe for BENCHMARKS.md ("Do the two cores slow each other?"): `spin compute SECONDS`
// counts a dependent multiply-add chain, in millions of steps per second.
// (Its `memory` mode walks a permutation of short cycles that stay in cache: use mem.c.)
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sched.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int c,char**v){
  int mem=strcmp(v[1],"memory")==0; double secs=atof(v[2]);
  size_t n=64<<20; unsigned *a=0; if(mem){a=malloc(n*4);for(size_t i=0;i<n;i++)a[i]=(i*2654435761u)%n;}
  double t0=now(); unsigned long it=0; volatile unsigned x=1; unsigned idx=0;
  while(now()-t0<secs){ for(int k=0;k<100000;k++){ if(mem){idx=a[idx];} else {x=x*1664525u+1013904223u;} } it++; }
  printf("%s %.1f Mops/s\n", v[1], it*0.1/(now()-t0)); (void)idx; return 0;}
