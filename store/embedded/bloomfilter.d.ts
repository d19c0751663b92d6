/** The part of the `bloomfilter` package the cold tier uses (cold-ids.ts): the package declares no types. */
declare module 'bloomfilter' {
  export class BloomFilter {
    /** `bits` rounded up to a multiple of 32, `hashes` hash functions. */
    constructor(bits: number, hashes: number)
    add(value: string): void
    /** False: certainly never added; true: added, or a false positive. */
    test(value: string): boolean
  }
}
