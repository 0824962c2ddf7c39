BupdatesJ
{1Yæê¦Ú