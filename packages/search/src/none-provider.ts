import type {
  LexicalScope,
  ScopedLexicalSearch,
  ScopedSemanticSearch,
  SearchHit,
  SearchProvider,
  SemanticScope,
} from './provider';
import { SearchUnavailableError, searchLexicalEachTime, searchSemanticEachTime } from './provider';

/** Indexing disabled (`SEARCH_PROVIDER=none`): nothing is indexed and searching is unavailable. */
export class NoSearchProvider implements SearchProvider {
  readonly name = 'none' as const;
  async prepare(): Promise<void> {}
  async apply(): Promise<boolean> {
    throw new SearchUnavailableError('indexing is disabled');
  }
  async search(): Promise<never> {
    throw new SearchUnavailableError('indexing is disabled');
  }
  lexicalScope(scope: LexicalScope): ScopedLexicalSearch {
    return searchLexicalEachTime(this, scope);
  }
  async searchSemantic(): Promise<SearchHit[]> {
    throw new SearchUnavailableError('indexing is disabled');
  }
  semanticScope(scope: SemanticScope): ScopedSemanticSearch {
    return searchSemanticEachTime(this, scope);
  }
  async applyVectors(): Promise<boolean> {
    throw new SearchUnavailableError('indexing is disabled');
  }
  async vectorRevisionIds(): Promise<string[]> {
    return [];
  }
  async clearVectors(): Promise<void> {}

  async clear(): Promise<void> {}
  async indexedRevisionIds(): Promise<string[]> {
    return [];
  }
}
