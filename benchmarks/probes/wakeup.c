// A probe for BENCHMARKS.md ("Where a query waits beside idle work"): `wakeup N`.
// Wakeup latency: thread A posts a semaphore with a timestamp, thread B wakes and records
// the delay; N rounds with a 200 us gap. Prints p50/p99/p999/max in microseconds.
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec*1e-3;}
static sem_t s, back; static volatile double sent; static double *lat; static int n;
static void* b(void*x){ for(int i=0;i<n;i++){ sem_wait(&s); lat[i]=now()-sent; volatile double w=0; for(int k=0;k<20000;k++) w+=k; sem_post(&back);} return 0; }
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int c,char**v){ n=atoi(v[1]); lat=malloc(n*sizeof(double)); sem_init(&s,0,0); sem_init(&back,0,0);
 pthread_t t; pthread_create(&t,0,b,0);
 for(int i=0;i<n;i++){ usleep(200); sent=now(); sem_post(&s); sem_wait(&back);} pthread_join(t,0);
 qsort(lat,n,sizeof(double),cmp);
 printf("wakeup us p50 %.1f p99 %.1f p999 %.1f max %.1f\n",lat[n/2],lat[n*99/100],lat[n*999/1000],lat[n-1]); return 0;}
